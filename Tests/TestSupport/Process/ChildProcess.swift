import Foundation
import Glibc
import Locking

/// Everything a child writes to one pipe, read on a thread of its own so the
/// child never blocks on a full pipe. The thread ends at EOF (the child exited).
public final class PipeCollector: Sendable {
    private let state = Locked<(bytes: [UInt8], closed: Bool)>(([], false))

    /// Takes ownership of the pipe's reading end.
    public init(reading descriptor: Int32) {
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let thread = Thread { [self] in
            // read(2) itself, not `availableData`: that traps on EINTR, which a
            // SIGCHLD (another child ending) delivered to this thread causes.
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                if count <= 0 { break }
                state.withLock { $0.bytes.append(contentsOf: buffer[0..<count]) }
            }
            state.withLock { $0.closed = true }
        }
        thread.start()
    }

    public var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    /// Polls until `predicate` holds for the text so far, or `seconds` pass; true if it held.
    public func wait(upTo seconds: Double, until predicate: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let (text, closed) = state.withLock { (String(decoding: $0.bytes, as: UTF8.self), $0.closed) }
            if predicate(text) { return true }
            if closed || ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for EOF (every writer gone) and returns the whole text.
    public func finish(upTo seconds: Double) async -> String {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !state.withLock({ $0.closed }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return text
    }
}

/// A child process with its standard output and error collected, started by
/// `Spawn` (not Foundation's `Process`, which can crash on Swift 6.3.1; see
/// `Spawn`). A thread of its own waits for the exit, so the end is seen and
/// timed even while the cooperative pool is busy.
/// `stop()` (SIGKILL if still running, then reap) must run on every path.
public final class ChildProcess: Sendable {
    public let pid: Int32
    public let stdout: PipeCollector
    public let stderr: PipeCollector
    private let clock: ExitClock

    /// Starts `executable` with `arguments`; `environment` is added to this
    /// process's environment less every `SSE_GATEWAY_*` variable, so an outer
    /// setting cannot leak into a test.
    public init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SSE_GATEWAY_") }
        merged.merge(environment) { _, new in new }
        let out = try Spawn.pipe()
        let err = try Spawn.pipe()
        defer {
            close(out.write)
            close(err.write)
        }
        do {
            pid = try Spawn.start(executable, arguments, environment: merged, stdout: out.write, stderr: err.write)
        } catch {
            close(out.read)
            close(err.read)
            throw error
        }
        stdout = PipeCollector(reading: out.read)
        stderr = PipeCollector(reading: err.read)
        let clock = ExitClock()
        self.clock = clock
        let thread = Thread { [pid] in
            var raw: Int32 = 0
            while waitpid(pid, &raw, 0) < 0 && errno == EINTR {}
            let (exited, code) = Spawn.decode(raw)
            clock.ended(exited ? .exit(code) : .signal(code))
        }
        thread.start()
    }

    public var isRunning: Bool { clock.ending == nil }

    public func send(_ signal: Int32) {
        guard isRunning else { return }
        clock.signalled()
        _ = kill(pid, signal)
    }

    /// Time from the last `send` to the child's end, as the waiting thread saw
    /// it (so a busy cooperative pool in this process does not inflate it);
    /// nil until both happened.
    public var timeFromSignalToExit: Duration? { clock.elapsed }

    /// How the child ended, once it has: `.exit(status)` or `.signal(number)`.
    public enum Ending: Equatable, Sendable {
        case exit(Int32)
        case signal(Int32)
    }

    /// Waits up to `seconds` for the child to end; nil if it is still running.
    public func waitForExit(upTo seconds: Double) async -> Ending? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            if let ending = clock.ending { return ending }
            if ContinuousClock.now >= deadline { return nil }
            try? await Task.sleep(for: .milliseconds(5))
        }
    }

    /// Kills the child if it still runs and waits until it is reaped. Harmless twice.
    public func stop() async {
        send(SIGKILL)
        _ = await waitForExit(upTo: 10)
    }
}

/// How and when the child ended, and when it was last signalled (the two
/// instants `ChildProcess.timeFromSignalToExit` is measured between).
final class ExitClock: Sendable {
    private let state = Locked<(signalled: ContinuousClock.Instant?, ended: ContinuousClock.Instant?,
                               ending: ChildProcess.Ending?)>((nil, nil, nil))

    func signalled() { state.withLock { $0.signalled = .now } }
    func ended(_ ending: ChildProcess.Ending) {
        state.withLock {
            $0.ended = .now
            $0.ending = ending
        }
    }

    var ending: ChildProcess.Ending? { state.withLock { $0.ending } }

    var elapsed: Duration? {
        state.withLock { state in
            guard let signalled = state.signalled, let ended = state.ended else { return nil }
            return ended - signalled
        }
    }
}

/// Runs a short-lived child to its end (killing it past `seconds`): its ending and output.
public func runToExit(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
               upTo seconds: Double = 10) async throws -> (ending: ChildProcess.Ending?, stdout: String, stderr: String) {
    let child = try ChildProcess(executable, arguments, environment: environment)
    let ending = await child.waitForExit(upTo: seconds)
    await child.stop()
    return (ending, await child.stdout.finish(upTo: 5), await child.stderr.finish(upTo: 5))
}
