import Foundation
import Glibc
import Synchronization

/// Everything a child writes to one pipe, read on a thread of its own so the
/// child never blocks on a full pipe. The thread ends at EOF (the child exited).
final class PipeCollector: Sendable {
    private let state = Mutex<(bytes: [UInt8], closed: Bool)>(([], false))

    init(_ pipe: Pipe) {
        let handle = pipe.fileHandleForReading
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

    var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    /// Polls until `predicate` holds for the text so far, or `seconds` pass; true if it held.
    func wait(upTo seconds: Double, until predicate: (String) -> Bool) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            let (text, closed) = state.withLock { (String(decoding: $0.bytes, as: UTF8.self), $0.closed) }
            if predicate(text) { return true }
            if closed || ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Waits for EOF (every writer gone) and returns the whole text.
    func finish(upTo seconds: Double) async -> String {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !state.withLock({ $0.closed }) && ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(10))
        }
        return text
    }
}

/// A child process with its standard output and error collected.
/// `stop()` (SIGKILL if still running, then reap) must run on every path.
final class ChildProcess: Sendable {
    let process: Process
    let stdout: PipeCollector
    let stderr: PipeCollector
    private let clock: ExitClock

    /// Starts `executable` with `arguments`; `environment` is added to this
    /// process's environment less every `SSE_GATEWAY_*` variable, so an outer
    /// setting cannot leak into a test.
    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var merged = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("SSE_GATEWAY_") }
        merged.merge(environment) { _, new in new }
        process.environment = merged
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        let clock = ExitClock()
        process.terminationHandler = { _ in clock.ended() }
        // Foundation spawns with the calling thread's signal mask, and the
        // cooperative pool's threads block SIGTERM and SIGINT: a child would
        // inherit that and ignore them. Spawn with an empty mask, then restore.
        var none = sigset_t(), saved = sigset_t()
        sigemptyset(&none)
        pthread_sigmask(SIG_SETMASK, &none, &saved)
        defer { pthread_sigmask(SIG_SETMASK, &saved, nil) }
        try process.run()
        self.process = process
        self.clock = clock
        stdout = PipeCollector(out)
        stderr = PipeCollector(err)
    }

    var pid: Int32 { process.processIdentifier }
    var isRunning: Bool { process.isRunning }

    func send(_ signal: Int32) {
        guard process.isRunning else { return }
        clock.signalled()
        _ = kill(process.processIdentifier, signal)
    }

    /// Time from the last `send` to the child's end, as Foundation saw it on
    /// its own thread (so a busy cooperative pool in this process does not
    /// inflate it); nil until both happened.
    var timeFromSignalToExit: Duration? { clock.elapsed }

    /// How the child ended, once it has: `.exit(status)` or `.signal(number)`.
    enum Ending: Equatable {
        case exit(Int32)
        case signal(Int32)
    }

    /// Waits up to `seconds` for the child to end; nil if it is still running.
    func waitForExit(upTo seconds: Double) async -> Ending? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        // The termination handler may run just after `isRunning` turns false.
        while process.isRunning || !clock.hasEnded {
            if ContinuousClock.now >= deadline {
                if process.isRunning { return nil }
                break
            }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return process.terminationReason == .exit
            ? .exit(process.terminationStatus) : .signal(process.terminationStatus)
    }

    /// Kills the child if it still runs and waits until it is reaped. Harmless twice.
    func stop() async {
        send(SIGKILL)
        _ = await waitForExit(upTo: 10)
    }
}

/// The two instants `ChildProcess.timeFromSignalToExit` is measured between.
final class ExitClock: Sendable {
    private let instants = Mutex<(signalled: ContinuousClock.Instant?, ended: ContinuousClock.Instant?)>((nil, nil))

    func signalled() { instants.withLock { $0.signalled = .now } }
    func ended() { instants.withLock { $0.ended = .now } }

    var hasEnded: Bool { instants.withLock { $0.ended != nil } }

    var elapsed: Duration? {
        instants.withLock { instants in
            guard let signalled = instants.signalled, let ended = instants.ended else { return nil }
            return ended - signalled
        }
    }
}

/// Runs a short-lived child to its end (killing it past `seconds`): its ending and output.
func runToExit(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
               upTo seconds: Double = 10) async throws -> (ending: ChildProcess.Ending?, stdout: String, stderr: String) {
    let child = try ChildProcess(executable, arguments, environment: environment)
    let ending = await child.waitForExit(upTo: seconds)
    await child.stop()
    return (ending, await child.stdout.finish(upTo: 5), await child.stderr.finish(upTo: 5))
}
