import Foundation
import Glibc
import HTTPCore

/// A real Redis Cluster for one test: `masters` masters with `replicasPerMaster`
/// replicas each, every node a `RedisServer` (`--cluster-enabled yes`, its cluster
/// bus on a free port of its own, `cluster-node-timeout` 1000 ms,
/// `cluster-require-full-coverage no` unless asked: the setting docs/redis-cluster.md
/// recommends, under which the other shards keep serving while one master is lost),
/// joined by `redis-cli --cluster create`.
///
/// Promises: `start` returns once every node reports `cluster_state:ok`, all agree
/// on which node serves each slot, and every replica's link to its master is up.
/// Nodes are the `RedisServer`s of `nodes` (kill, pause, restart them through it);
/// the processes and directories go when the value does. Every wait is bounded.
/// Looked at with `redis-cli` (Debian's, beside redis-server), never with the
/// client under test.
public final class RedisCluster: Sendable {
    public static let cli = "/usr/bin/redis-cli"
    public static let nodeTimeoutMilliseconds = 1000

    /// Every node, masters as created first (roles change on failover: ask `topology()`).
    public let nodes: [RedisServer]

    /// `redis+cluster://127.0.0.1:<port>,…` naming every node as a seed.
    public var url: String { "redis+cluster://" + nodes.map { "127.0.0.1:\($0.port)" }.joined(separator: ",") }

    /// `redis://127.0.0.1:<port>` of each node.
    public var nodeURLs: [String] { nodes.map(\.url) }

    private init(nodes: [RedisServer]) {
        self.nodes = nodes
    }

    /// The full fixture: 3 masters, one replica each (6 processes).
    public static func start() async throws -> RedisCluster {
        try await start(masters: 3, replicasPerMaster: 1)
    }

    /// The cheaper fixture for end-to-end suites: 3 masters, no replica.
    public static func startWithoutReplicas() async throws -> RedisCluster {
        try await start(masters: 3, replicasPerMaster: 0)
    }

    /// `requireFullCoverage`: Redis's default, under which every node refuses every
    /// key (`CLUSTERDOWN`) while any slot has no master.
    public static func start(masters: Int, replicasPerMaster: Int, requireFullCoverage: Bool = false) async throws -> RedisCluster {
        precondition(masters >= 3, "redis-cli --cluster create wants at least 3 masters")
        guard FileManager.default.isExecutableFile(atPath: cli) else {
            throw RedisServer.StartFailed(description: "\(cli) is not installed: apt-get install redis-tools")
        }
        var nodes: [RedisServer] = []
        for _ in 0..<(masters * (1 + replicasPerMaster)) { nodes.append(try await startNode(requireFullCoverage: requireFullCoverage)) }
        let cluster = RedisCluster(nodes: nodes)
        let created = try await runToExit(cli, ["--cluster", "create"] + nodes.map { "127.0.0.1:\($0.port)" }
                                               + ["--cluster-replicas", String(replicasPerMaster), "--cluster-yes"], upTo: 60)
        guard created.ending == .exit(0) else {
            throw RedisServer.StartFailed(description: "redis-cli --cluster create failed: \(created.stdout) \(created.stderr)")
        }
        try await cluster.waitUntilHealthy(masters: masters, replicas: masters * replicasPerMaster)
        return cluster
    }

    /// A cluster-enabled server with its bus on a free port (another is tried if
    /// that one was taken before the server bound it).
    private static func startNode(requireFullCoverage: Bool) async throws -> RedisServer {
        var attempt = 1
        while true {
            let listener = try Listener(address: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
            let busPort = listener.port
            listener.close()
            do {
                return try await RedisServer.start([
                    "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                    "--cluster-node-timeout", String(nodeTimeoutMilliseconds), "--cluster-port", String(busPort),
                    "--cluster-require-full-coverage", requireFullCoverage ? "yes" : "no",
                ])
            } catch where attempt < 5 {
                attempt += 1
            }
        }
    }

    // MARK: Looking at it

    /// One node as `CLUSTER NODES` describes it.
    public struct NodeInfo: Sendable, Equatable {
        public let id: String
        public let port: Int
        public let isMaster: Bool
        /// The master's id, for a replica.
        public let masterID: String?
        /// Flagged `fail` (or `fail?`: suspected) by the node asked.
        public let isFailing: Bool
        public let slots: [ClosedRange<Int>]

        public func serves(_ slot: Int) -> Bool { slots.contains { $0.contains(slot) } }
    }

    /// `CLUSTER NODES` as one node (the first of `nodes` that answers, or `port`) sees it.
    public func topology(askingPort port: Int? = nil) async throws -> [NodeInfo] {
        var lastError = ""
        for node in port.map({ [$0] }) ?? nodes.map(\.port) {
            let reply = try await Self.command(port: node, ["CLUSTER", "NODES"])
            guard reply.ok else {
                lastError = reply.text
                continue
            }
            return reply.text.split(separator: "\n").compactMap(Self.nodeInfo)
        }
        throw RedisServer.StartFailed(description: "no cluster node answered CLUSTER NODES: \(lastError)")
    }

    /// The port of the node serving `slot` (as the first node answering sees it).
    public func port(servingSlot slot: Int) async throws -> Int? {
        try await topology().first { $0.isMaster && !$0.isFailing && $0.serves(slot) }?.port
    }

    /// The `RedisServer` listening on `port`.
    public func server(port: Int) -> RedisServer? {
        nodes.first { $0.port == port }
    }

    /// `CLUSTER KEYSLOT key`, asked of a node.
    public func keySlot(_ key: String) async throws -> Int {
        let reply = try await Self.command(port: nodes[0].port, ["CLUSTER", "KEYSLOT", key])
        guard reply.ok, let slot = Int(reply.text.trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw RedisServer.StartFailed(description: "CLUSTER KEYSLOT failed: \(reply.text)")
        }
        return slot
    }

    // MARK: Changing it

    /// Waits until a replica of the master that served `slot` before (on
    /// `formerMasterPort`, killed or paused by the test) is master of `slot`, as
    /// every live node sees it, with `cluster_state:ok`; returns its port.
    public func waitForPromotion(servingSlot slot: Int, formerMasterPort: Int, upTo seconds: Double = 30) async throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let live = nodes.map(\.port).filter { $0 != formerMasterPort }
        while ContinuousClock.now < deadline {
            var agreed: Int?
            var everyoneAgrees = true
            for port in live {
                guard let view = try? await topology(askingPort: port),
                      let serving = view.first(where: { $0.isMaster && !$0.isFailing && $0.serves(slot) }),
                      serving.port != formerMasterPort, agreed == nil || agreed == serving.port,
                      try await Self.command(port: port, ["CLUSTER", "INFO"]).text.contains("cluster_state:ok") else {
                    everyoneAgrees = false
                    break
                }
                agreed = serving.port
            }
            if everyoneAgrees, let agreed { return agreed }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw RedisServer.StartFailed(description: "no replica took over slot \(slot) within \(seconds) s")
    }

    /// Moves one slot (and its keys) to the master on `targetPort`, as
    /// `redis-cli --cluster reshard` does for each slot: IMPORTING on the target,
    /// MIGRATING on the source, `MIGRATE` of its keys, then `SETSLOT … NODE` on the
    /// target, the source and every other master.
    public func moveSlot(_ slot: Int, toPort targetPort: Int) async throws {
        let view = try await topology()
        guard let source = view.first(where: { $0.isMaster && $0.serves(slot) }),
              let target = view.first(where: { $0.port == targetPort && $0.isMaster }) else {
            throw RedisServer.StartFailed(description: "slot \(slot) or master \(targetPort) not found")
        }
        guard source.port != targetPort else { return }
        try await Self.cliChecked(port: target.port, ["CLUSTER", "SETSLOT", String(slot), "IMPORTING", source.id])
        try await Self.cliChecked(port: source.port, ["CLUSTER", "SETSLOT", String(slot), "MIGRATING", target.id])
        for _ in 0..<10_000 {
            let keys = try await Self.command(port: source.port, ["CLUSTER", "GETKEYSINSLOT", String(slot), "100"]).text
                .split(separator: "\n").map(String.init).filter { !$0.isEmpty }
            if keys.isEmpty { break }
            try await Self.cliChecked(port: source.port, ["MIGRATE", "127.0.0.1", String(target.port), "", "0", "5000", "KEYS"] + keys)
        }
        try await Self.cliChecked(port: target.port, ["CLUSTER", "SETSLOT", String(slot), "NODE", target.id])
        try await Self.cliChecked(port: source.port, ["CLUSTER", "SETSLOT", String(slot), "NODE", target.id])
        for other in view where other.isMaster && !other.isFailing && other.port != source.port && other.port != target.port {
            _ = try await Self.command(port: other.port, ["CLUSTER", "SETSLOT", String(slot), "NODE", target.id])
        }
    }

    /// `redis-cli --cluster reshard`: moves `count` slots from the master on
    /// `fromPort` to the master on `toPort` (redis-cli picks which), keys included.
    public func reshard(slots count: Int, fromPort: Int, toPort: Int) async throws {
        let view = try await topology()
        guard let from = view.first(where: { $0.port == fromPort }), let to = view.first(where: { $0.port == toPort }) else {
            throw RedisServer.StartFailed(description: "no node on \(fromPort) or \(toPort)")
        }
        let result = try await runToExit(Self.cli, ["--cluster", "reshard", "127.0.0.1:\(toPort)", "--cluster-from", from.id,
                                                    "--cluster-to", to.id, "--cluster-slots", String(count), "--cluster-yes"],
                                         upTo: 120)
        guard result.ending == .exit(0) else {
            throw RedisServer.StartFailed(description: "redis-cli --cluster reshard failed: \(result.stdout) \(result.stderr)")
        }
    }

    // MARK: Internals

    /// Polls until every node is `cluster_state:ok`, agrees on the slot owners,
    /// and sees the expected roles, and every replica's link is up.
    private func waitUntilHealthy(masters: Int, replicas: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var last = ""
        while ContinuousClock.now < deadline {
            if try await isHealthy(masters: masters, replicas: replicas, reason: &last) { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw RedisServer.StartFailed(description: "the cluster did not become healthy within 30 s: \(last)")
    }

    private func isHealthy(masters: Int, replicas: Int, reason: inout String) async throws -> Bool {
        var owners: [String]?
        for node in nodes {
            let info = try await Self.command(port: node.port, ["CLUSTER", "INFO"]).text
            guard info.contains("cluster_state:ok") else {
                reason = "\(node.port): \(info.prefix(40))"
                return false
            }
            let view = try await topology(askingPort: node.port)
            let mastersSeen = view.filter { $0.isMaster && !$0.slots.isEmpty }
            guard mastersSeen.count == masters, view.filter({ !$0.isMaster }).count == replicas,
                  !view.contains(where: \.isFailing) else {
                reason = "\(node.port) sees \(mastersSeen.count) masters"
                return false
            }
            let ownersHere = mastersSeen.map { "\($0.id) \($0.slots)" }.sorted()
            if let owners, owners != ownersHere {
                reason = "nodes disagree on the slots"
                return false
            }
            owners = ownersHere
            if let me = view.first(where: { $0.port == node.port }), !me.isMaster {
                let replication = try await Self.command(port: node.port, ["INFO", "replication"]).text
                guard replication.contains("master_link_status:up") else {
                    reason = "replica \(node.port) not linked yet"
                    return false
                }
            }
        }
        return true
    }

    /// A `CLUSTER NODES` line: `<id> <ip:port@bus> <flags> <master|-> <ping> <pong> <epoch> <link> <slot>…`
    /// (slots `n`, `a-b`, or `[n->-id]`/`[n-<-id]` while migrating, left out).
    private static func nodeInfo(_ line: Substring) -> NodeInfo? {
        let fields = line.split(separator: " ")
        guard fields.count >= 8, let colon = fields[1].lastIndex(of: ":") else { return nil }
        let portText = fields[1][fields[1].index(after: colon)...].prefix { $0 != "@" && $0 != "," }
        guard let port = Int(portText) else { return nil }
        let flags = fields[2].split(separator: ",")
        var slots: [ClosedRange<Int>] = []
        for field in fields.dropFirst(8) where !field.hasPrefix("[") {
            let bounds = field.split(separator: "-").compactMap { Int($0) }
            if bounds.count == 1 { slots.append(bounds[0]...bounds[0]) }
            if bounds.count == 2 { slots.append(bounds[0]...bounds[1]) }
        }
        return NodeInfo(id: String(fields[0]), port: port, isMaster: flags.contains("master"),
                        masterID: fields[3] == "-" ? nil : String(fields[3]),
                        isFailing: flags.contains("fail") || flags.contains("fail?"), slots: slots)
    }

    /// `redis-cli -p port args…` (raw output); `ok` false when it failed or replied an error.
    public static func command(port: Int, _ arguments: [String]) async throws -> (ok: Bool, text: String) {
        let result = try await runToExit(cli, ["-h", "127.0.0.1", "-p", String(port)] + arguments, upTo: 10)
        let text = result.stdout
        let refused = text.hasPrefix("ERR") || text.hasPrefix("MOVED") || text.hasPrefix("ASK") || text.hasPrefix("CLUSTERDOWN")
            || text.hasPrefix("IOERR") || text.hasPrefix("Could not connect")
        return (result.ending == .exit(0) && !refused, text + result.stderr)
    }

    private static func cliChecked(port: Int, _ arguments: [String]) async throws {
        let reply = try await command(port: port, arguments)
        guard reply.ok else {
            throw RedisServer.StartFailed(description: "redis-cli -p \(port) \(arguments.joined(separator: " ")): \(reply.text)")
        }
    }
}
