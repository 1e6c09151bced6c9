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

    private func connect(_ address: ClusterAddress) async throws -> RedisConnection {
        try await RedisConnection.connect(to: address.url(from: RedisURL(host: "127.0.0.1")), timeout: Self.timeout)
    }

    private func subscriber(_ address: ClusterAddress, _ pushes: Pushes) async throws -> RedisSubscriber {
        try await RedisSubscriber.connect(to: address.url(from: RedisURL(host: "127.0.0.1")), timeout: Self.timeout,
                                          onPush: { pushes.add($0) })
    }

    private func seeds(_ cluster: RedisCluster) throws -> [RedisURL] {
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

    /// SSUBSCRIBE on a channel's master delivers every SPUBLISH in order (a script's too, channel in its keys' slot);
    /// elsewhere it is refused MOVED, and channels of two slots in one call CROSSSLOT.
    @Test func shardedSubscribeDeliversSpublish() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let map = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let channel = Array("sse:{news}:ch".utf8)
        let route = try #require(map.route(key: channel))
        let pushes = Pushes()
        let subscriber = try await subscriber(route.master.address, pushes)
        defer { subscriber.close() }
        try await subscriber.ssubscribe([channel], timeout: Self.timeout)
        let publisher = try await connect(route.master.address)
        defer { publisher.close() }
        for index in 0..<200 {
            #expect(try await publisher.publish(Array("\(index)".utf8), to: channel, mode: .sharded, timeout: Self.timeout) == 1)
        }
        let script = "redis.call('INCR', KEYS[1]); return redis.call('SPUBLISH', ARGV[1], 'scripted')"
        #expect(try await publisher.command([Array("EVAL".utf8), Array(script.utf8), Array("1".utf8), Array("sse:{news}:id".utf8), channel],
                                            timeout: Self.timeout) == .integer(1))
        let expected = (0..<200).map(String.init) + ["scripted"]
        try await waitUntil { pushes.messages.count >= expected.count }
        #expect(pushes.messages == expected)
        // A global PUBLISH of the same name does not reach a sharded subscriber.
        _ = try await publisher.publish(Array("global".utf8), to: channel, mode: .global, timeout: Self.timeout)
        try await subscriber.ping(timeout: Self.timeout)

        let other = try #require(map.masters.first { $0 != route.master })
        let wrong = try await self.subscriber(other.address, Pushes())
        defer { wrong.close() }
        let moved = await #expect(throws: RedisError.self) { try await wrong.ssubscribe([channel], timeout: Self.timeout) }
        #expect(moved.flatMap { ClusterRedirection($0) }?.address == route.master.address)
        let crossSlot = await #expect(throws: RedisError.self) {
            try await subscriber.ssubscribe([channel, Array("sse:{weather}:ch".utf8)], timeout: Self.timeout)
        }
        #expect(crossSlot.map { "\($0)".contains("CROSSSLOT") } == true)
        #expect(subscriber.isOpen && wrong.isOpen)
        try await subscriber.ping(timeout: Self.timeout)
        #expect(pushes.messages == expected)
    }

    /// When its slot moves, a sharded subscription ends with a `shardChannelUnsubscribed` push (not a reply to
    /// anyone): the connection stays usable, the caller's own SUNSUBSCRIBE of another channel still returns, and
    /// subscribing on the new master delivers what is published there.
    @Test func slotMoveEndsShardedSubscription() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let map = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let moving = Array("sse:{news}:ch".utf8)
        let route = try #require(map.route(key: moving))
        // Another channel on the same master, in another slot, that stays there.
        let staying = try #require((0..<1000).lazy.map { Array("sse:{t\($0)}:ch".utf8) }.first {
            map.master(forKey: $0) == route.master && HashSlot(key: $0) != route.slot
        })
        let pushes = Pushes()
        let subscriber = try await subscriber(route.master.address, pushes)
        defer { subscriber.close() }
        try await subscriber.ssubscribe([moving], timeout: Self.timeout)
        try await subscriber.ssubscribe([staying], timeout: Self.timeout)
        let target = try #require(map.masters.first { $0 != route.master })

        let movingAt = ContinuousClock.now
        try await cluster.moveSlot(route.slot.value, toPort: target.address.port)
        let movedAt = ContinuousClock.now
        try await waitUntil { pushes.unsubscribed == [String(decoding: moving, as: UTF8.self)] }
        print("reshard: moveSlot took \(movedAt - movingAt) (redis-cli calls included); the push was seen \(ContinuousClock.now - movedAt) after it returned")
        #expect(subscriber.isOpen)
        // Unsubscribing from the moved channel on its old node: answered (or refused MOVED), never a hang or a close.
        do {
            try await subscriber.sunsubscribe([moving], timeout: Self.timeout)
            print("reshard: SUNSUBSCRIBE of the moved channel on its old node: answered")
        } catch {
            print("reshard: SUNSUBSCRIBE of the moved channel on its old node: \(error)")
            #expect(ClusterRedirection(error)?.address == target.address, "\(error)")
        }
        #expect(subscriber.isOpen)
        try await subscriber.sunsubscribe([staying], timeout: Self.timeout)
        try await subscriber.ping(timeout: Self.timeout)
        #expect(pushes.unsubscribed == [String(decoding: moving, as: UTF8.self)])

        let again = try await self.subscriber(target.address, pushes)
        defer { again.close() }
        try await again.ssubscribe([moving], timeout: Self.timeout)
        let publisher = try await connect(target.address)
        defer { publisher.close() }
        #expect(try await publisher.publish(Array("after".utf8), to: moving, mode: .sharded, timeout: Self.timeout) == 1)
        try await waitUntil { pushes.messages == ["after"] }
    }

    /// A master SIGKILLed: its subscriber's connection closes; its replica is promoted; a fresh map names the
    /// replica as the slot's master, and sharded pub/sub works there.
    @Test func failoverPromotesTheReplica() async throws {
        let cluster = try await RedisCluster.start()
        let map = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let channel = Array("sse:{news}:ch".utf8)
        let route = try #require(map.route(key: channel))
        let replica = try #require(map.shard(for: route.slot)?.replicas.first)
        let subscriber = try await subscriber(route.master.address, Pushes())
        let closed = Locked(false)
        subscriber.onClose { closed.withLock { $0 = true } }
        try await subscriber.ssubscribe([channel], timeout: Self.timeout)

        let killedAt = ContinuousClock.now
        await cluster.server(port: route.master.address.port)?.kill()
        try await waitUntil { closed.withLock { $0 } }
        let promoted = try await cluster.waitForPromotion(servingSlot: route.slot.value, formerMasterPort: route.master.address.port)
        print("failover: master killed to replica serving, as every node sees it: \(ContinuousClock.now - killedAt)")
        #expect(promoted == replica.address.port)
        let refreshed = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        #expect(refreshed.master(for: route.slot) == replica)
        let pushes = Pushes()
        let again = try await self.subscriber(replica.address, pushes)
        defer { again.close() }
        try await again.ssubscribe([channel], timeout: Self.timeout)
        let publisher = try await connect(replica.address)
        defer { publisher.close() }
        #expect(try await publisher.publish(Array("after".utf8), to: channel, mode: .sharded, timeout: Self.timeout) == 1)
        try await waitUntil { pushes.messages == ["after"] }

        // The killed master started again (its nodes.conf kept) rejoins as the promoted node's replica.
        try await cluster.server(port: route.master.address.port)?.start(again: true)
        try await waitUntil {
            let view = try? await cluster.topology(askingPort: promoted)
            return view?.first { $0.port == route.master.address.port }.map { !$0.isMaster && !$0.isFailing } ?? false
        }
        #expect(try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout).shard(for: route.slot)?.replicas
            .contains { $0.address == route.master.address } == true)
    }
}

extension RedisClusterTests {
    /// A master that is silent (SIGSTOP) long enough is replaced by its replica; when it comes back it is a
    /// replica, and its sharded subscribers hear of it (a `shardChannelUnsubscribed` push, or the connection
    /// closed): a subscription that silently stops delivering is what this rules out.
    @Test func pausedMasterComesBackAsReplica() async throws {
        let cluster = try await RedisCluster.start()
        let map = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let channel = Array("sse:{news}:ch".utf8)
        let route = try #require(map.route(key: channel))
        let pushes = Pushes()
        let subscriber = try await subscriber(route.master.address, pushes)
        defer { subscriber.close() }
        let closed = Locked(false)
        subscriber.onClose { closed.withLock { $0 = true } }
        try await subscriber.ssubscribe([channel], timeout: Self.timeout)
        let paused = try #require(cluster.server(port: route.master.address.port))

        let pausedAt = ContinuousClock.now
        paused.pause()
        let promoted = try await cluster.waitForPromotion(servingSlot: route.slot.value, formerMasterPort: route.master.address.port)
        print("failover: master paused to replica serving: \(ContinuousClock.now - pausedAt)")
        let resumedAt = ContinuousClock.now
        paused.resume()
        try await waitUntil { pushes.unsubscribed == [String(decoding: channel, as: UTF8.self)] || closed.withLock { $0 } }
        print("failover: old master resumed to its subscriber told: \(ContinuousClock.now - resumedAt),"
              + " pushes \(pushes.unsubscribed), closed \(closed.withLock { $0 })")
        try await waitUntil {
            let view = try? await cluster.topology(askingPort: promoted)
            return view?.first { $0.port == route.master.address.port }?.isMaster == false
        }
    }
}

extension RedisClusterTests {
    /// 50 callers refreshing together share at most two fetches and all get the map; a refresh after a slot
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
        #expect(source.fetches <= 2)
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

extension RedisClusterTests {
    /// `redis-cli --cluster reshard` of 100 slots: a fresh map shows exactly those moved to the target, their keys
    /// are read there, and the subscriber on the source hears `shardChannelUnsubscribed` for exactly the channels
    /// of the moved slots it followed, and no other.
    @Test func reshardMovesSlotsKeysAndSubscriptions() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let before = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let source = before.shards[0]
        let target = before.shards[1].master
        // A tag per slot at both ends of the source's slots (redis-cli picks which slots move).
        let allSlots = source.slots.flatMap { Array($0) }
        let wanted = Set(allSlots.prefix(150) + allSlots.suffix(150))
        var tags: [Int: String] = [:]
        var index = 0
        while tags.count < wanted.count && index < 2_000_000 {
            let tag = "t\(index)"
            let slot = HashSlot(key: tag).value
            if wanted.contains(slot) && tags[slot] == nil { tags[slot] = tag }
            index += 1
        }
        #expect(tags.count == wanted.count)
        let writer = try await connect(source.master.address)
        defer { writer.close() }
        let pushes = Pushes()
        let subscriber = try await subscriber(source.master.address, pushes)
        defer { subscriber.close() }
        for tag in tags.values {
            _ = try await writer.command(["SET", "sse:{\(tag)}:id", tag], timeout: Self.timeout)
            try await subscriber.ssubscribe([Array("sse:{\(tag)}:ch".utf8)], timeout: Self.timeout)
        }

        try await cluster.reshard(slots: 100, fromPort: source.master.address.port, toPort: target.address.port)
        let after = try await SlotMap.fetch(from: seeds(cluster), timeout: Self.timeout)
        let moved = after.reassignedSlots(since: before)
        #expect(moved.count == 100)
        #expect(moved.allSatisfy { before.master(for: $0) == source.master && after.master(for: $0) == target })
        let movedTags = moved.compactMap { tags[$0.value] }
        #expect(!movedTags.isEmpty)
        let reader = try await connect(target.address)
        defer { reader.close() }
        for tag in movedTags {
            #expect(try await reader.command(["GET", "sse:{\(tag)}:id"], timeout: Self.timeout) == .bulk(Array(tag.utf8)))
        }
        let expected = Set(movedTags.map { "sse:{\($0)}:ch" })
        try await waitUntil { Set(pushes.unsubscribed) == expected }
        try await subscriber.ping(timeout: Self.timeout)
        #expect(Set(pushes.unsubscribed) == expected && pushes.unsubscribed.count == expected.count)
        #expect(subscriber.isOpen)
    }
}
