import Glibc

/// A failed system call: its name and `errno`. Created in exactly one place
/// (`Syscall`), so every layer above sees typed errors instead of raw numbers.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The C function that failed, e.g. `"accept4"`.
    public let call: String
    /// The `errno` it left.
    public let errno: Int32

    public init(call: String, errno: Int32) {
        self.call = call
        self.errno = errno
    }

    /// The peer is gone: the connection was reset, or we wrote after it closed.
    public var isPeerGone: Bool {
        errno == ECONNRESET || errno == EPIPE || errno == ENOTCONN || errno == ECONNABORTED || errno == ETIMEDOUT
    }

    /// The process or the system ran out of descriptors or kernel memory.
    public var isResourceExhaustion: Bool {
        errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM
    }

    public var description: String {
        "\(call): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// Why an I/O wait on the event loop ended without readiness.
public enum IOWaitError: Error, Sendable, Equatable {
    /// The deadline passed first.
    case timedOut
    /// The descriptor was closed (or aborted) while the task waited.
    case closed
}

/// The result of a non-blocking call: it did something, or it would have blocked.
enum IOResult<Value> {
    case processed(Value)
    case wouldBlock
}
