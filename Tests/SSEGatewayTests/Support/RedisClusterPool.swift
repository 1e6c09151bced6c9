import TestSupport

/// The Redis Clusters the end-to-end suites run on with `SSE_TEST_BACKEND=redis-cluster`:
/// at most `capacity` of them (starting one takes about 2 s, and some 50 at once
/// overload a 2-core machine), each leased to one gateway at a time and emptied
/// (`FLUSHALL` on every master) before it is leased again, so a test finds a cluster as
/// fresh as a new one: no keys, no subscribers, the same three masters. A test waits
/// for a lease when all are in use.
actor RedisClusterPool {
    static let shared = RedisClusterPool(capacity: 3)

    private let capacity: Int
    private var idle: [RedisCluster] = []
    private var started = 0
    private var waiting: [CheckedContinuation<RedisCluster, Never>] = []

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// A cluster for one gateway, empty; give it back with `giveBack` once that gateway stopped.
    func lease() async throws -> RedisCluster {
        let cluster: RedisCluster
        if let free = idle.popLast() {
            cluster = free
        } else if started < capacity {
            started += 1
            do {
                return try await RedisCluster.startWithoutReplicas()
            } catch {
                started -= 1
                throw error
            }
        } else {
            cluster = await withCheckedContinuation { waiting.append($0) }
        }
        do {
            for node in cluster.nodes {
                let flushed = try await RedisCluster.command(port: node.port, ["FLUSHALL"])
                guard flushed.ok else { throw NotEmptied(reply: flushed.text) }
            }
        } catch {
            await retire(cluster)
            throw error
        }
        return cluster
    }

    struct NotEmptied: Error {
        let reply: String
    }

    /// Back from a gateway that has stopped (its connections closed).
    func giveBack(_ cluster: RedisCluster) {
        if waiting.isEmpty {
            idle.append(cluster)
        } else {
            waiting.removeFirst().resume(returning: cluster)
        }
    }

    /// A cluster that could not be emptied: stopped, and its place freed for a new one.
    private func retire(_ cluster: RedisCluster) async {
        for node in cluster.nodes { await node.stop() }
        started -= 1
        // A test waiting for a lease gets a new cluster started for it instead.
        if !waiting.isEmpty, let fresh = try? await RedisCluster.startWithoutReplicas() {
            started += 1
            giveBack(fresh)
        }
    }
}
