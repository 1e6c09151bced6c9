import Foundation
import Glibc

/// Redis Sentinel for one test: a master, its replicas and three sentinels (real
/// `redis-server` processes, the sentinels in sentinel mode), each on a free port of
/// 127.0.0.1 in a temporary directory, with short timeouts: a master silent for
/// 1 s is down, a failover that stalls is retried after 3 s.
///
/// Promises: `start` returns once the sentinels agree on the master and know the
/// replica and each other (so a failover can happen); `url` is the
/// `redis+sentinel://` URL of the three; every process ends with the set (see `RedisServer`).
public final class SentinelSet: Sendable {
    public static let masterName = "streams"

    /// The node that was master at start, and those that were its replicas.
    public let master: RedisServer
    public let replicas: [RedisServer]
    public let sentinels: [RedisServer]

    /// The data nodes' password and the sentinels' own (nil: none).
    public let password: String?
    public let sentinelPassword: String?

    /// The sentinels' URL, with both passwords when the set has them.
    public var url: String {
        "redis+sentinel://" + (password.map { ":\($0)@" } ?? "")
            + sentinels.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") + "/\(Self.masterName)"
            + (sentinelPassword.map { "?sentinel_password=\($0)" } ?? "")
    }

    private init(master: RedisServer, replicas: [RedisServer], sentinels: [RedisServer], password: String?,
                 sentinelPassword: String?) {
        self.master = master
        self.replicas = replicas
        self.sentinels = sentinels
        self.password = password
        self.sentinelPassword = sentinelPassword
    }

    /// Starts the set with `replicas` replicas (one, or two so that a promoted one still has a
    /// replica); with `password` every data node requires it, with `sentinelPassword` every sentinel.
    public static func start(replicas count: Int = 1, password: String? = nil,
                             sentinelPassword: String? = nil) async throws -> SentinelSet {
        let auth = password.map { ["--requirepass", $0, "--masterauth", $0] } ?? []
        let master = try await RedisServer.start(auth)
        var replicas: [RedisServer] = []
        for _ in 0..<count {
            replicas.append(try await RedisServer.start(["--replicaof", "127.0.0.1", String(master.port)] + auth))
        }
        let configuration = """
        sentinel monitor \(masterName) 127.0.0.1 \(master.port) 2
        sentinel down-after-milliseconds \(masterName) 1000
        sentinel failover-timeout \(masterName) 3000
        sentinel parallel-syncs \(masterName) 1
        \(password.map { "sentinel auth-pass \(masterName) \($0)" } ?? "")

        """
        var sentinels: [RedisServer] = []
        for _ in 0..<3 {
            sentinels.append(try await RedisServer.startSentinel(configuration: configuration,
                                                                 sentinelPassword.map { ["--requirepass", $0] } ?? []))
        }
        let set = SentinelSet(master: master, replicas: replicas, sentinels: sentinels, password: password,
                              sentinelPassword: sentinelPassword)
        try await set.waitUntilSettled()
        return set
    }

    /// Waits until every sentinel knows the replicas (in sync) and the two other sentinels.
    private func waitUntilSettled() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            var settled = true
            for sentinel in sentinels {
                let info = await RedisCLI.run(port: sentinel.port, ["SENTINEL", "master", Self.masterName],
                                              password: sentinelPassword)
                let fields = RedisCLI.pairs(info)
                if fields["num-slaves"] != String(replicas.count) || fields["num-other-sentinels"] != "2" { settled = false }
            }
            for replica in replicas {
                let replication = await RedisCLI.run(port: replica.port, ["INFO", "replication"], password: password)
                if !replication.contains("master_link_status:up") { settled = false }
            }
            if settled { return }
            try await Task.sleep(for: .milliseconds(200))
        }
        throw RedisServer.StartFailed(description: "the sentinels did not settle within 30 s")
    }

    /// The master's port as the first answering sentinel names it.
    public func masterPort() async -> Int? {
        for sentinel in sentinels {
            let reply = await RedisCLI.run(port: sentinel.port, ["SENTINEL", "get-master-addr-by-name", Self.masterName],
                                           password: sentinelPassword)
            let lines = reply.split(separator: "\n")
            if lines.count == 2, let port = Int(lines[1]) { return port }
        }
        return nil
    }

    /// Waits until the sentinels name a master on another port than `port`; that port.
    public func waitForPromotion(from port: Int, within seconds: Double = 30) async throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if let now = await masterPort(), now != port { return now }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw RedisServer.StartFailed(description: "no replica was promoted within \(seconds) s")
    }

    /// Ends every process.
    public func stop() async {
        for sentinel in sentinels { await sentinel.kill() }
        for replica in replicas { await replica.kill() }
        await master.kill()
    }
}

/// `redis-cli` for fixtures and checks: one command, its raw output.
public enum RedisCLI {
    /// Runs `redis-cli -h 127.0.0.1 -p <port> <arguments>` (logged in with `password`) and
    /// returns what it printed (empty when it did not finish within 5 s).
    public static func run(port: Int, _ arguments: [String], password: String? = nil) async -> String {
        let path = Scratch.directory + "/redis-cli-\(UUID().uuidString).out"
        let output = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard output >= 0 else { return "" }
        defer { try? FileManager.default.removeItem(atPath: path) }
        let pid: pid_t
        do {
            pid = try Spawn.start("/usr/bin/redis-cli", ["-h", "127.0.0.1", "-p", String(port)] + arguments,
                                  environment: password.map { ["REDISCLI_AUTH": $0] } ?? [:], stdout: output, stderr: output)
        } catch {
            Glibc.close(output)
            return ""
        }
        Glibc.close(output)
        let deadline = ContinuousClock.now + .seconds(5)
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now > deadline {
                Glibc.kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return ""
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// A flat name/value reply (as `SENTINEL master` prints it, one per line) as a dictionary.
    public static func pairs(_ output: String) -> [String: String] {
        let lines = output.split(separator: "\n").map(String.init)
        var fields: [String: String] = [:]
        var index = 0
        while index + 1 < lines.count {
            fields[lines[index]] = lines[index + 1]
            index += 2
        }
        return fields
    }
}
