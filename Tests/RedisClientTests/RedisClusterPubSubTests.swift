import Locking
import RedisClient
import Testing
import TestSupport

/// Sharded pub/sub on a real Redis Cluster, and what becomes of it when slots move
/// and masters fail (the suite and its helpers: `RedisClusterTests.swift`).
extension RedisClusterTests {
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
