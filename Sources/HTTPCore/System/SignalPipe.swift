import Glibc

/// POSIX signals turned into bytes on a pipe (the self-pipe trick), so they can be
/// handled as ordinary reads instead of in a signal handler.
///
/// Promises: the pipe is process-wide, created on first use before any handler is
/// installed, and never closed, since a handler may run at any moment and must not
/// write to a descriptor number that was closed and reused. Both ends are
/// non-blocking: a handler never blocks on a full pipe, a reader never waits. The
/// handler only calls `write(2)` and restores `errno` (async-signal-safe).
public enum SignalPipe {
    private static let ends: (read: Int32, write: Int32) = {
        // Created at start-up, before anything else holds descriptors: failing here means
        // the process cannot shut down cleanly at all, so it stops with the reason.
        do {
            return try Syscall.pipe()
        } catch {
            fatalError("pipe for signal delivery failed: \(error)")
        }
    }()

    /// The end to watch for readability (e.g. with a dispatch read source).
    public static var readDescriptor: Int32 { ends.read }

    /// From now on each of `signals` writes its number to the pipe instead of its default
    /// effect. Handlers stay installed for the life of the process.
    public static func install(_ signals: [Int32]) {
        _ = ends
        for number in signals {
            signal(number) { number in
                let saved = errno
                var byte = UInt8(truncatingIfNeeded: number)
                _ = write(SignalPipe.ends.write, &byte, 1)
                errno = saved
            }
        }
    }

    /// The signals delivered since the last call, oldest first.
    public static func drain() -> [Int32] {
        var numbers: [Int32] = []
        var byte: UInt8 = 0
        // The pointer lives only inside the closure (no `&byte` escaping into a
        // buffer pointer's init: the release build warned of a dangling pointer).
        while case .processed(1) = withUnsafeMutableBytes(of: &byte, { buffer in try? Syscall.read(ends.read, buffer) }) {
            numbers.append(Int32(byte))
        }
        return numbers
    }
}
