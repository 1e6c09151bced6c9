import Foundation
import Glibc
import HTTPCore
import Locking

/// A real `redis-server` (Debian's `/usr/bin/redis-server`) for one test: on a
/// free port of 127.0.0.1, in a fresh temporary directory, with an append-only
/// file fsynced at every write (so `kill` then `start(again: true)` loses nothing).
///
/// Promises: `start` returns once this very process answers (its `INFO` names its pid) and has loaded its data; `kill`, `stop`,
/// `pause`, `resume` and `start(again:)` act on the one process of the moment, on
/// the same port; the process never outlives the test process (killed in
/// `deinit`, at exit, and by a watchdog shell when the test process dies any
/// other way), and the directory is removed in `deinit`.
public final class RedisServer: Sendable {
    public static let executable = "/usr/bin/redis-server"

    /// The TCP port, the same across restarts.
    public let port: Int
    /// The server's `--dir` (its append-only files live here).
    public let directory: String
    /// `redis://127.0.0.1:<port>`.
    public var url: String { "redis://127.0.0.1:\(port)" }

    private let base: String
    private let arguments: [String]
    /// `--requirepass`'s value, for the start-up check.
    private let password: String?
    private let process = Locked(Running?.none)

    private struct Running {
        let pid: pid_t
        /// The shell that SIGKILLs the server once the test process is gone.
        let watchdog: pid_t
    }

    /// Why a server could not start (including: not installed).
    public struct StartFailed: Error, CustomStringConvertible {
        public let description: String
        /// The process ended before it answered (e.g. its port was taken meanwhile).
        var exitedAtStart = false
    }

    /// Starts a server with the standard arguments plus `extraArguments`
    /// (e.g. `["--requirepass", "secret"]`).
    public static func start(_ extraArguments: [String] = []) async throws -> RedisServer {
        try await start(extraArguments, sentinelConfiguration: nil)
    }

    /// Starts a `redis-sentinel` (the same binary in sentinel mode) with
    /// `configuration` as its config file's first lines (`sentinel monitor …`).
    public static func startSentinel(configuration: String, _ extraArguments: [String] = []) async throws -> RedisServer {
        try await start(extraArguments, sentinelConfiguration: configuration)
    }

    private static func start(_ extraArguments: [String], sentinelConfiguration: String?) async throws -> RedisServer {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw StartFailed(description: "\(executable) is not installed: apt-get install redis-server")
        }
        // A port found free may be taken again before the server binds it (by another
        // test's server or a client's ephemeral port): the server then exits at start,
        // and another port is tried.
        var attempt = 1
        while true {
            let listener = try Listener(address: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
            let port = listener.port
            listener.close()
            let server = RedisServer(port: port, extraArguments: extraArguments, sentinelConfiguration: sentinelConfiguration)
            do {
                try await server.start(again: false)
                return server
            } catch let failure as StartFailed where failure.exitedAtStart && attempt < 5 {
                attempt += 1
            }
        }
    }

    private init(port: Int, extraArguments: [String], sentinelConfiguration: String?) {
        self.port = port
        base = Scratch.directory + "/redis-\(UUID().uuidString)"
        directory = base + "/data"
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        password = extraArguments.firstIndex(of: "--requirepass").flatMap { index in
            index + 1 < extraArguments.count ? extraArguments[index + 1] : nil
        }
        if let sentinelConfiguration {
            // Sentinel rewrites its config file as it learns: one of its own, writable.
            let file = base + "/sentinel.conf"
            _ = FileManager.default.createFile(atPath: file, contents: Data(sentinelConfiguration.utf8))
            arguments = [file, "--sentinel", "--port", String(port), "--bind", "127.0.0.1", "--dir", directory,
                         "--daemonize", "no"] + extraArguments
        } else {
            arguments = ["--port", String(port), "--bind", "127.0.0.1", "--dir", directory, "--save", "",
                         "--appendonly", "yes", "--appendfsync", "always", "--daemonize", "no"] + extraArguments
        }
    }

    deinit {
        if let running = process.withLock({ $0.take() }) { Self.end(running, signal: SIGKILL) }
        try? FileManager.default.removeItem(atPath: base)
    }

    /// Starts the server again on the same port (after `kill` or `stop`); with
    /// `keepData` false the directory is emptied first.
    public func start(again keepData: Bool) async throws {
        if let running = process.withLock({ $0.take() }) { Self.end(running, signal: SIGKILL) }
        if !keepData {
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        let log = Glibc.open(base + "/server.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o600)
        guard log >= 0 else { throw StartFailed(description: "cannot open \(base)/server.log") }
        defer { Glibc.close(log) }
        let pid = try Spawn.start(Self.executable, arguments, environment: [:], stdout: log, stderr: log)
        let watchdog = try Spawn.start("/bin/sh", ["-c", "while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done; kill -9 \(pid)"],
                                       environment: ["PATH": "/usr/bin:/bin"], stdout: log, stderr: log)
        let running = Running(pid: pid, watchdog: watchdog)
        process.withLock { $0 = running }
        Self.register(running)
        do {
            try await waitUntilAnswering(pid: pid)
        } catch {
            if let running = process.withLock({ $0.take() }) { Self.end(running, signal: SIGKILL) }
            throw error
        }
    }

    /// `start(again: keepData)`.
    public func start(keepData: Bool) async throws {
        try await start(again: keepData)
    }

    /// SIGKILL, and waits until the process is gone.
    public func kill() async {
        if let running = process.withLock({ $0.take() }) { await Self.endAsync(running, signal: SIGKILL) }
    }

    /// SIGTERM (the server writes and closes its files), and waits until it exited.
    public func stop() async {
        if let running = process.withLock({ $0.take() }) { await Self.endAsync(running, signal: SIGTERM) }
    }

    /// SIGSTOP: the server holds its connections but answers nothing.
    public func pause() {
        if let pid = process.withLock({ $0?.pid }) { Glibc.kill(pid, SIGSTOP) }
    }

    /// SIGCONT after `pause`.
    public func resume() {
        if let pid = process.withLock({ $0?.pid }) { Glibc.kill(pid, SIGCONT) }
    }

    /// The server's log so far (for failure messages).
    public var log: String {
        (try? String(contentsOfFile: base + "/server.log", encoding: .utf8)) ?? ""
    }

    private func waitUntilAnswering(pid: pid_t) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid {
                process.withLock { $0 = nil }
                throw StartFailed(description: "redis-server exited at start: \(log)", exitedAtStart: true)
            }
            if await Self.isServing(pid: pid, port: port, password: password) { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw StartFailed(description: "redis-server did not answer PING within 10 s: \(log)")
    }

    /// Whether the server on `port` is the process `pid` (its `INFO server` says so: a
    /// server started beside this one may have taken the port first and would answer a
    /// bare PING as well) and has loaded its data (PING gets `+PONG`, not `-LOADING`).
    private static func isServing(pid: pid_t, port: Int, password: String?) async -> Bool {
        guard let connection = try? await Connection.connect(to: SocketAddress(numericHost: "127.0.0.1", port: port)!,
                                                             deadline: .now + .seconds(1)) else { return false }
        defer { connection.close() }
        let auth = password.map { "AUTH \($0)\r\n" } ?? ""
        let deadline = ContinuousClock.now + .seconds(1)
        guard (try? await connection.write(Array((auth + "INFO server\r\nPING\r\n").utf8), deadline: deadline)) != nil else {
            return false
        }
        var reply: [UInt8] = []
        let pong = Array("+PONG\r\n".utf8)
        // The PING's reply comes last: +PONG, or an error (-LOADING while loading).
        while !reply.ends(with: pong) && !reply.contains(subsequence: Array("\r\n-".utf8)) {
            guard let bytes = try? await connection.read(deadline: deadline), !bytes.isEmpty else { return false }
            reply += bytes
        }
        return reply.ends(with: pong) && reply.contains(subsequence: Array("process_id:\(pid)\r\n".utf8))
    }

    // MARK: Ending processes

    /// Servers alive now, killed at exit if a test left one running.
    private static let alive = Locked([pid_t: pid_t]())
    private static let atExitInstalled: Void = {
        atexit {
            let all = RedisServer.alive.withLock { alive in alive }
            for (pid, watchdog) in all {
                Glibc.kill(watchdog, SIGKILL)
                Glibc.kill(pid, SIGKILL)
            }
        }
    }()

    private static func register(_ running: Running) {
        _ = atExitInstalled
        alive.withLock { $0[running.pid] = running.watchdog }
    }

    /// Signals and reaps, blocking (deinit only: a SIGKILLed process is gone at once).
    private static func end(_ running: Running, signal: Int32) {
        alive.withLock { _ = $0.removeValue(forKey: running.pid) }
        Glibc.kill(running.watchdog, SIGKILL)
        Glibc.kill(running.pid, signal)
        Glibc.kill(running.pid, SIGCONT)
        var status: Int32 = 0
        while waitpid(running.pid, &status, 0) < 0 && errno == EINTR {}
        while waitpid(running.watchdog, &status, 0) < 0 && errno == EINTR {}
    }

    /// Signals and reaps without blocking a thread; SIGKILL after 10 s if SIGTERM was not enough.
    private static func endAsync(_ running: Running, signal: Int32) async {
        alive.withLock { _ = $0.removeValue(forKey: running.pid) }
        Glibc.kill(running.watchdog, SIGKILL)
        Glibc.kill(running.pid, signal)
        Glibc.kill(running.pid, SIGCONT)
        let deadline = ContinuousClock.now + .seconds(10)
        var status: Int32 = 0
        while waitpid(running.pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now > deadline { Glibc.kill(running.pid, SIGKILL) }
            try? await Task.sleep(for: .milliseconds(10))
        }
        while waitpid(running.watchdog, &status, 0) < 0 && errno == EINTR {}
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }

    func contains(subsequence needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { start in self[start..<(start + needle.count)].elementsEqual(needle) }
    }
}
