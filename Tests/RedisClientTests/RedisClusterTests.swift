import Locking
import RedisClient
import Testing
import TestSupport

/// The Redis Cluster pieces against a real cluster (`RedisCluster`: Debian's
/// redis-server nodes joined by `redis-cli --cluster create`): slots, the slot
/// map, redirections after slots move, sharded pub/sub. One cluster per test,
/// one test at a time (a cluster is 3 to 6 processes on a 2-core machine).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct RedisClusterTests {
    static let timeout: Duration = .seconds(5)

    /// Every push a subscriber received, in order.
    final class Pushes: Sendable {
        let all = Locked([RedisPush]())
        func add(_ push: RedisPush) { all.withLock { $0.append(push) } }
        var messages: [String] {
            all.withLock { $0.compactMap { if case .message(let m) = $0 { String(decoding: m.payload, as: UTF8.self) } else { nil } } }
        }
        var unsubscribed: [String] {
            all.withLock {
                $0.compactMap { if case .shardChannelUnsubscribed(let c) = $0 { String(decoding: c, as: UTF8.self) } else { nil } }
            }
        }
    }

    func connect(_ address: ClusterAddress) async throws -> RedisConnection {
        try await RedisConnection.connect(to: address.url(from: RedisURL(host: "127.0.0.1")), timeout: Self.timeout)
    }

    func subscriber(_ address: ClusterAddress, _ pushes: Pushes) async throws -> RedisSubscriber {
        try await RedisSubscriber.connect(to: address.url(from: RedisURL(host: "127.0.0.1")), timeout: Self.timeout,
                                          onPush: { pushes.add($0) })
    }

    func seeds(_ cluster: RedisCluster) throws -> [RedisURL] {
        try cluster.nodeURLs.map { try RedisURL(parsing: $0) }
    }

    /// The slot of 3,000 keys (hash tags, braces in every odd place, binary bytes) is the one the cluster computes.
    @Test func hashSlotsMatchClusterKeyslot() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let redis = try await RedisConnection.connect(to: RedisURL(parsing: cluster.nodeURLs[0]), timeout: Self.timeout)
        defer { redis.close() }
        var keys: [[UInt8]] = ["", "{", "}", "{}", "{}x", "x{", "x}{y}", "{a}{b}", "a{{b}}c", "foo{}{bar}", "sse:{news}:id",
                               "sse:{}:id", "{{}}", "é{ü}"].map { Array($0.utf8) }
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("ab{}:x0".utf8)
        for length in 0..<3_000 - keys.count {
            let bytes = (0..<(length % 24)).map { index in
                index % 5 == 4 ? UInt8.random(in: 0...255, using: &generator) : alphabet.randomElement(using: &generator)!
            }
            keys.append(bytes)
        }
        let slots = try await withThrowingTaskGroup(of: (Int, Int64?).self) { group in
            for (index, key) in keys.enumerated() {
                group.addTask { (index, try await redis.command([Array("CLUSTER".utf8), Array("KEYSLOT".utf8), key], timeout: Self.timeout).integer) }
            }
            var slots = [Int64?](repeating: nil, count: keys.count)
            for try await (index, slot) in group { slots[index] = slot }
            return slots
        }
        let mismatches = keys.indices.filter { slots[$0] != Int64(HashSlot(key: keys[$0]).value) }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5).map { keys[$0] })")
    }

    /// The map read from seeds (a dead one first) names the cluster's three masters, their slots and replicas,
    /// and CLUSTER SLOTS gives the same masters and slots as CLUSTER SHARDS.
    @Test func slotMapFromSeeds() async throws {
        let cluster = try await RedisCluster.start()
        let dead = RedisURL(host: "127.0.0.1", port: 1)
        let map = try await SlotMap.fetch(from: [dead] + seeds(cluster), timeout: Self.timeout)
        let topology = try await cluster.topology()
        #expect(map.coversEverySlot)
        #expect(Set(map.masters.map(\.id)) == Set(topology.filter(\.isMaster).map(\.id)))
        for shard in map.shards {
            let node = try #require(topology.first { $0.id == shard.master.id })
            #expect(node.port == shard.master.address.port && shard.slots == node.slots)
            #expect(shard.replicas.map(\.id) == topology.filter { $0.masterID == shard.master.id }.map(\.id))
        }
        let redis = try await connect(map.masters[1].address)
        defer { redis.close() }
        let fromSlots = try SlotMap.parse(slotsReply: try await redis.command(["CLUSTER", "SLOTS"], timeout: Self.timeout),
                                          queriedHost: "127.0.0.1")
        #expect(fromSlots.shards.map(\.master) == map.shards.map(\.master))
        #expect(fromSlots.shards.map(\.slots) == map.shards.map(\.slots))
        // A node that is not in cluster mode gives no map, and says why.
        let plain = try await RedisServer.start()
        await #expect(throws: RedisError.self) { try await SlotMap.fetch(from: [RedisURL(parsing: plain.url)], timeout: Self.timeout) }
    }

    /// A key routed by the map is served there; another master answers MOVED to the map's master.
    /// After its slot moves, the old map's master answers MOVED naming the new one, and a fresh map routes there.
    @Test func movedAfterSlotMoves() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let map = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let key = Array("sse:{news}:id".utf8)
        let route = try #require(map.route(key: key))
        let owner = try await connect(route.master.address)
        defer { owner.close() }
        #expect(try await owner.command([Array("SET".utf8), key, Array("1".utf8)], timeout: Self.timeout) == .status("OK"))
        let other = try #require(map.masters.first { $0 != route.master })
        let elsewhere = try await connect(other.address)
        defer { elsewhere.close() }
        let refused = await #expect(throws: RedisError.self) {
            try await elsewhere.command([Array("GET".utf8), key], timeout: Self.timeout)
        }
        #expect(refused.flatMap { ClusterRedirection($0) } == ClusterRedirection(kind: .moved, slot: route.slot, address: route.master.address))

        try await cluster.moveSlot(route.slot.value, toPort: other.address.port)
        let moved = await #expect(throws: RedisError.self) {
            try await owner.command([Array("GET".utf8), key], timeout: Self.timeout)
        }
        #expect(moved.flatMap { ClusterRedirection($0) } == ClusterRedirection(kind: .moved, slot: route.slot, address: other.address))
        #expect(owner.isOpen)
        let refreshed = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        #expect(refreshed.master(for: route.slot) == other)
        #expect(refreshed != map)
        #expect(try await elsewhere.command([Array("GET".utf8), key], timeout: Self.timeout) == .bulk(Array("1".utf8)))
    }

    /// While a slot migrates, a key already moved is answered ASK by the source, naming the target.
    @Test func askWhileSlotMigrates() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let map = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let key = Array("sse:{weather}:id".utf8)
        let route = try #require(map.route(key: key))
        let target = try #require(map.shards.first { $0.master != route.master }).master
        let source = try await connect(route.master.address)
        defer { source.close() }
        let destination = try await connect(target.address)
        defer { destination.close() }
        let slot = String(route.slot.value)
        _ = try await destination.command(["CLUSTER", "SETSLOT", slot, "IMPORTING", route.master.id], timeout: Self.timeout)
        _ = try await source.command(["CLUSTER", "SETSLOT", slot, "MIGRATING", target.id], timeout: Self.timeout)
        let asked = await #expect(throws: RedisError.self) {
            try await source.command([Array("SET".utf8), key, Array("1".utf8)], timeout: Self.timeout)
        }
        #expect(asked.flatMap { ClusterRedirection($0) } == ClusterRedirection(kind: .ask, slot: route.slot, address: target.address))
        // On the importing node, only a command right after ASKING is served; others are sent back (MOVED).
        // 100 asked SETs among 100 plain GETs, all concurrent on one pipelined connection: no GET takes a SET's ASKING.
        let outcomes = try await withThrowingTaskGroup(of: (asked: Bool, served: Bool).self) { group in
            for index in 0..<200 {
                group.addTask {
                    if index % 2 == 0 {
                        let reply = try await destination.commandAfterAsking([Array("SET".utf8), key, Array("\(index)".utf8)],
                                                                             timeout: Self.timeout)
                        return (true, reply == .status("OK"))
                    }
                    do throws(RedisError) {
                        _ = try await destination.command([Array("GET".utf8), key], timeout: Self.timeout)
                        return (false, true)
                    } catch {
                        return (false, ClusterRedirection(error)?.kind != .moved)
                    }
                }
            }
            return try await group.reduce(into: [(asked: Bool, served: Bool)]()) { $0.append($1) }
        }
        #expect(outcomes.filter { $0.asked }.allSatisfy { $0.served })
        #expect(outcomes.filter { !$0.asked && $0.served }.isEmpty)
        #expect(destination.isOpen)
    }
}

extension RedisClusterTests {
    /// 50 callers refreshing together share a few fetches (two when they all arrive during the
    /// first; a loaded machine staggers their start over a third or fourth, never one each)
    /// and all get the map; a refresh after a slot
    /// moved names its new master; with every seed gone, the last map's nodes still answer.
    @Test func slotMapSourceRefreshes() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let source = SlotMapSource(seeds: try seeds(cluster), timeout: Self.timeout)
        #expect(source.current == nil)
        let maps = try await withThrowingTaskGroup(of: SlotMap.self) { group in
            for _ in 0..<50 { group.addTask { try await source.refresh() } }
            return try await group.reduce(into: [SlotMap]()) { $0.append($1) }
        }
        #expect(maps.count == 50 && maps.allSatisfy { $0.coversEverySlot && $0 == maps[0] })
        #expect(source.fetches <= 5, "50 callers made \(source.fetches) fetches: they did not share them")
        #expect(source.current == maps[0])

        let slot = HashSlot(key: "sse:{news}:id")
        let target = try #require(maps[0].masters.first { $0 != maps[0].master(for: slot) })
        try await cluster.moveSlot(slot.value, toPort: target.address.port)
        let fresh = try await source.refresh()
        #expect(fresh.master(for: slot) == target)
        #expect(fresh.reassignedSlots(since: maps[0]) == [slot])

        let orphan = SlotMapSource(seeds: [RedisURL(host: "127.0.0.1", port: 1)], timeout: Self.timeout, map: fresh)
        let again = try await orphan.refresh(lost: [fresh.masters[0].address])
        #expect(again == fresh)
        let none = SlotMapSource(seeds: [RedisURL(host: "127.0.0.1", port: 1)], timeout: Self.timeout)
        await #expect(throws: RedisError.self) { try await none.refresh() }
        #expect(none.current == nil && none.fetches == 1)
    }
}
