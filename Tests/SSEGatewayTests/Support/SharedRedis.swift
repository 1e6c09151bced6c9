import Foundation
import Locking
import TestSupport

/// The Redis the gateways of one cross-gateway test share (`ClusterGatewayTests`,
/// `MinReplicasTests`), on the engine `SSE_TEST_BACKEND` selects: a fresh `redis-server`
/// (memory and redis: these suites need a Redis whatever the backend), or with
/// `redis-cluster` a fresh Redis Cluster of three masters, so the suites hold on both.
///
/// Promises: `url` is what `--redis` takes. `kill` and `start(keepData:)` act on the whole
/// Redis (every node of a cluster) unless `topic` names one: then on the master serving that
/// topic's slot alone (one shard lost, the others serving). `start` returns once the Redis
/// serves again: a cluster's nodes all `cluster_state:ok` and agreeing on every slot's master.
/// With `keepData` false a cluster node comes back empty but still in the cluster (its
/// `nodes.conf` kept), as a master without persistence restarts. `stop` ends every process.
/// Every wait is bounded.
final class SharedRedis: Sendable {
    /// The one redis-server (not on Redis Cluster).
    let server: RedisServer?
    /// Its replica (`--replicaof`), when started with `replicas`.
    private let serverReplica: RedisServer?
    /// The Redis Cluster (with `SSE_TEST_BACKEND=redis-cluster`).
    let cluster: RedisCluster?
    /// The ports of the nodes `kill` stopped, restarted by `start(keepData:)`.
    private let killed = Locked(Set<Int>())

    var url: String { cluster?.url ?? server!.url }

    var isCluster: Bool { cluster != nil }

    private init(server: RedisServer?, replica: RedisServer? = nil, cluster: RedisCluster?) {
        self.server = server
        serverReplica = replica
        self.cluster = cluster
    }

    /// A fresh Redis for `backend`, with one replica per master when `replicas` (its link up
    /// before this returns). A Redis Cluster without replicas is three processes, about 2 s to start.
    static func start(_ backend: Backend = .selected, replicas: Bool = false) async throws -> SharedRedis {
        if backend == .redisCluster {
            let cluster = try await RedisCluster.start(masters: 3, replicasPerMaster: replicas ? 1 : 0)
            return SharedRedis(server: nil, cluster: cluster)
        }
        let server = try await RedisServer.start()
        guard replicas else { return SharedRedis(server: server, cluster: nil) }
        let replica = try await RedisServer.start(["--replicaof", "127.0.0.1", String(server.port)])
        let deadline = ContinuousClock.now + .seconds(10)
        while !(await RedisCLI.run(port: replica.port, ["INFO", "replication"]).contains("master_link_status:up")) {
            guard ContinuousClock.now < deadline else {
                await replica.stop(); await server.stop()
                throw HarnessFailure("the replica's link to its master did not come up within 10 s")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return SharedRedis(server: server, replica: replica, cluster: nil)
    }

    /// The master serving `topic` (a cluster's; the one server otherwise).
    func master(serving topic: String) async throws -> RedisServer {
        guard let cluster else { return server! }
        let slot = try await cluster.keySlot("{\(topic)}")
        guard let port = try await cluster.port(servingSlot: slot), let node = cluster.server(port: port) else {
            throw HarnessFailure("no master serves slot \(slot) of \(topic)")
        }
        return node
    }

    /// The replica of the master serving `topic` (started with `replicas`).
    func replica(of topic: String) async throws -> RedisServer {
        guard let cluster else {
            guard let serverReplica else { throw HarnessFailure("started without replicas") }
            return serverReplica
        }
        let master = try await master(serving: topic)
        let view = try await cluster.topology()
        guard let id = view.first(where: { $0.port == master.port })?.id,
              let port = view.first(where: { $0.masterID == id })?.port, let node = cluster.server(port: port) else {
            throw HarnessFailure("the master on \(master.port) has no replica")
        }
        return node
    }

    /// SIGKILL: every node, or only the master serving `topic`.
    func kill(topic: String? = nil) async throws {
        var victims = cluster?.nodes ?? [server!]
        if let topic { victims = [try await master(serving: topic)] }
        for node in victims {
            await node.kill()
            killed.withLock { _ = $0.insert(node.port) }
        }
    }

    /// Starts again what `kill` stopped, with its data or empty, and waits until it serves.
    func start(keepData: Bool) async throws {
        let ports = killed.withLock { ports in defer { ports = [] }; return ports.sorted() }
        guard let cluster else { return try await server!.start(keepData: keepData) }
        for port in ports {
            guard let node = cluster.server(port: port) else { continue }
            if !keepData { try Self.emptyKeepingClusterConfig(node.directory) }
            try await node.start(again: true)
        }
        try await waitUntilServing(cluster)
    }

    /// Ends every process.
    func stop() async {
        let nodes = cluster?.nodes ?? ([server!] + (serverReplica.map { [$0] } ?? []))
        for node in nodes { await node.stop() }
    }

    /// Removes a stopped node's data (its append-only files) but not `nodes.conf`: it comes
    /// back empty as the same member of the cluster, serving the same slots.
    private static func emptyKeepingClusterConfig(_ directory: String) throws {
        for entry in try FileManager.default.contentsOfDirectory(atPath: directory) where entry != "nodes.conf" {
            try FileManager.default.removeItem(atPath: directory + "/" + entry)
        }
    }

    /// Until every node says `cluster_state:ok` and sees every slot served by a master not failing (30 s at most).
    private func waitUntilServing(_ cluster: RedisCluster) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        var last = ""
        while ContinuousClock.now < deadline {
            var serving = true
            for node in cluster.nodes {
                let info = (try? await RedisCluster.command(port: node.port, ["CLUSTER", "INFO"]))?.text ?? ""
                let view = (try? await cluster.topology(askingPort: node.port)) ?? []
                let covered = view.filter { $0.isMaster && !$0.isFailing }.reduce(0) { sum, master in
                    sum + master.slots.reduce(0) { $0 + $1.count }
                }
                if !info.contains("cluster_state:ok") || covered != 16_384 {
                    last = "\(node.port): \(info.prefix(40)), \(covered) slots served"
                    serving = false
                    break
                }
            }
            if serving { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw HarnessFailure("the Redis Cluster did not serve again within 30 s: \(last)")
    }
}
