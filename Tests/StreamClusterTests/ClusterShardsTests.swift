import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// The engine on a real Redis Cluster (3 masters, `redis-cli --cluster create`):
/// topics spread over the masters, each shard its own link, a several-topic stream
/// spanning shards, and slots moving under publishers and subscribers.
@Suite(.serialized) struct ClusterShardsTests {
    /// Topic names, `perMaster` for each master of the cluster (by their hash slot).
    static func topicsOnEveryMaster(_ cluster: RedisCluster, perMaster: Int = 2) async throws -> [Int: [String]] {
        let masters = try await cluster.topology().filter { $0.isMaster && !$0.isFailing }
        var byPort: [Int: [String]] = [:]
        for n in 0..<10_000 {
            let name = "topic-\(n)"
            guard let owner = masters.first(where: { $0.serves(HashSlot(key: name).value) }) else { continue }
            if byPort[owner.port, default: []].count < perMaster { byPort[owner.port, default: []].append(name) }
            if byPort.count == masters.count, byPort.values.allSatisfy({ $0.count == perMaster }) { break }
        }
        return byPort
    }

    static func metric(_ engine: ClusterEngine, _ name: String) -> UInt64? {
        engine.metrics.first { $0.name == name }?.value
    }

    /// Publishes on one gateway reach the other's subscribers for topics on every
    /// master; each topic's keys are on the master serving its slot (topics spread).
    @Test func topicsSpreadOverEveryShard() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let (a, b) = (try RunningEngine(cluster.url), try RunningEngine(cluster.url))
        try await a.ready()
        try await b.ready()
        let byPort = try await Self.topicsOnEveryMaster(cluster)
        #expect(byPort.count == 3)
        #expect(Self.metric(a.engine, "sse_gateway_redis_shards") == 3)
        for (port, topics) in byPort {
            for topic in topics {
                let stream = try await b.subscribe(topic)
                for index in 1...3 { #expect(try await a.publish(topic, .events, "\(topic)#\(index)").id == UInt64(index)) }
                let events = try await stream.events(3)
                #expect(events.compactMap(\.number) == [1, 2, 3])
                #expect(events.map(\.data) == (1...3).map { "\(topic)#\($0)" })
                stream.cancel()
                // The topic's keys are on the master serving its slot.
                let exists = try await cluster.server(port: port)!.run(["EXISTS", "sse:{\(topic)}:id"])
                #expect(exists.integer == 1, "the keys of \(topic) are on the master on port \(port)")
            }
        }
        await a.stop()
        await b.stop()
    }

    /// A stream of three topics, one on each master: every value of every topic, in order.
    @Test func aSeveralTopicStreamSpansShards() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let (a, b) = (try RunningEngine(cluster.url), try RunningEngine(cluster.url))
        try await a.ready()
        try await b.ready()
        let names = try await Self.topicsOnEveryMaster(cluster, perMaster: 1).values.map { $0[0] }.sorted()
        let sub = try await b.engine.subscribe(topics: .tagged(names), channel: .events, resumeAfter: nil)
        for index in 1...10 {
            for name in names { _ = try await a.publish(name, .events, "\(name)#\(index)") }
        }
        var marks: [FrameMark] = []
        while marks.count < 30, let batch = await sub.nextMarkedBatch() { marks += batch.marks.filter { $0.id > 0 } }
        for slot in 0..<3 {
            #expect(marks.filter { $0.slot == slot }.map(\.id) == (1...10).map { UInt64($0) })
        }
        sub.cancel()
        await a.stop()
        await b.stop()
    }

    /// A slot moved (IMPORTING/MIGRATING/MIGRATE/SETSLOT, as a reshard does) while one
    /// gateway publishes to a topic in it and another streams it: every publish is
    /// acknowledged (MOVED, ASK, TRYAGAIN followed), the stream gets every id once, in
    /// order (the `sunsubscribe` push → resubscribe on the new owner → sync from the keys).
    @Test func aSlotMovingUnderPublishersAndSubscribersLosesNothing() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        // No periodic read of the map during the test: only MOVED and the push can tell of the move.
        let noPolling = { (configuration: inout ClusterConfiguration) in configuration.slotMapRefreshInterval = .seconds(600) }
        let (a, b) = (try RunningEngine(cluster.url, noPolling), try RunningEngine(cluster.url, noPolling))
        try await a.ready()
        try await b.ready()
        let topic = "moving"
        let slot = HashSlot(key: topic).value
        let source = try #require(try await cluster.port(servingSlot: slot))
        let target = try #require(try await cluster.topology().first { $0.isMaster && $0.port != source }?.port)
        let stream = try await b.subscribe(topic)
        let refreshesBefore = Self.metric(b.engine, "sse_gateway_redis_slot_refreshes_total") ?? 0
        let publishing = Task {
            var ids: [UInt64] = []
            for index in 1...60 {
                ids.append(try await a.publish(topic, .events, "v\(index)").id)
                try await Task.sleep(for: .milliseconds(5))
            }
            return ids
        }
        try await Task.sleep(for: .milliseconds(100))
        try await cluster.moveSlot(slot, toPort: target)
        let ids = try await publishing.value
        #expect(ids == (1...60).map { UInt64($0) })
        let events = try await stream.events(60, within: 5)
        #expect(events.compactMap(\.number) == (1...60).map { UInt64($0) })
        #expect(events.map(\.data) == (1...60).map { "v\($0)" })
        // Nothing twice: no 61st event arrives.
        #expect((try? await stream.events(1, within: 0.5)) == nil)
        stream.cancel()
        #expect(try await cluster.server(port: target)!.run(["EXISTS", "sse:{\(topic)}:id"]).integer == 1)
        #expect((Self.metric(b.engine, "sse_gateway_redis_slot_refreshes_total") ?? 0) > refreshesBefore)
        // Both gateways publish and stream on the new owner.
        let again = try await a.subscribe(topic, after: 60)
        #expect(try await b.publish(topic, .events, "v61").id == 61)
        #expect(try await again.events(1).compactMap(\.number) == [61])
        again.cancel()
        await a.stop()
        await b.stop()
    }

    /// Scale-in: every slot of one master moved to another (`redis-cli --cluster reshard`,
    /// as before a `del-node`). The emptied master's shard goes away; the gateway stays
    /// ready, and topics of every slot (those of the emptied master included) are
    /// published and streamed.
    @Test func aMasterEmptiedByAReshardRetiresOnlyItsShard() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let often = { (configuration: inout ClusterConfiguration) in configuration.slotMapRefreshInterval = .milliseconds(200) }
        let (a, b) = (try RunningEngine(cluster.url, often), try RunningEngine(cluster.url, often))
        try await a.ready()
        try await b.ready()
        let byPort = try await Self.topicsOnEveryMaster(cluster, perMaster: 1)
        let masters = try await cluster.topology().filter { $0.isMaster }
        let emptied = try #require(masters.first)
        let target = try #require(masters.last)
        let count = emptied.slots.reduce(0) { $0 + $1.count }
        try await cluster.reshard(slots: count, fromPort: emptied.port, toPort: target.port)
        #expect(try await cluster.topology().first { $0.port == emptied.port }?.slots.isEmpty == true)
        let deadline = ContinuousClock.now + .seconds(10)
        while Self.metric(a.engine, "sse_gateway_redis_shards") != 2 || Self.metric(b.engine, "sse_gateway_redis_shards") != 2 {
            #expect(ContinuousClock.now < deadline, "both gateways read the map without the emptied master")
            if ContinuousClock.now >= deadline { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        try await Task.sleep(for: .milliseconds(500))  // The maps applied, the emptied shard retired.
        #expect(a.engine.isReady, "\(a.engine.notReadyReason ?? "")")
        #expect(b.engine.isReady, "\(b.engine.notReadyReason ?? "")")
        for topic in byPort.values.flatMap({ $0 }) {
            let stream = try await b.subscribe(topic)
            #expect(try await a.publish(topic, .events, "\(topic)#1").id == 1)
            #expect(try await stream.events(1).map(\.data) == ["\(topic)#1"])
            stream.cancel()
        }
        #expect(a.engine.isReady && b.engine.isReady)
        await a.stop()
        await b.stop()
    }

    /// The moment of a scale-in that the reshard above may or may not hit (a race with
    /// the emptied master's own `sunsubscribe` of the probe): a map read from another
    /// node no longer names a master whose link is up. Its shard is retired; the gateway
    /// stays ready and serves the topics of the other masters.
    @Test func aMapWithoutALinkedMasterRetiresOnlyItsShard() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let a = try RunningEngine(cluster.url) { $0.slotMapRefreshInterval = .seconds(600) }
        try await a.ready()
        let map = try #require(await a.engine.slotMaps?.current)
        let emptied = map.shards[0]
        // Its slots left out (not given to another master: the test's map must not send a
        // shard's own keys where the real cluster does not have them).
        let scaledIn = try SlotMap(shards: Array(map.shards.dropFirst()))
        await a.engine.applyMap(scaledIn)
        #expect(a.engine.isReady, "\(a.engine.notReadyReason ?? "")")
        let byPort = try await Self.topicsOnEveryMaster(cluster, perMaster: 1)
        for (port, topics) in byPort where port != emptied.master.address.port {
            let stream = try await a.subscribe(topics[0])
            #expect(try await a.publish(topics[0], .events, "v").id == 1)
            #expect(try await stream.events(1).map(\.data) == ["v"])
            stream.cancel()
        }
        #expect(a.engine.isReady, "\(a.engine.notReadyReason ?? "")")
        await a.stop()
    }

    /// A publish answered `MOVED` while the slot map cannot be read quickly (the nodes
    /// asked first do not answer): it is refused (503) by its deadline, not after the
    /// whole read (a connect timeout per silent node).
    @Test func aMovedPublishWaitsForTheMapNoLongerThanItsDeadline() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let a = try RunningEngine(cluster.url) {
            $0.slotMapRefreshInterval = .seconds(600)
            $0.connectTimeout = .seconds(1)
            $0.commandTimeout = .milliseconds(400)
        }
        try await a.ready()
        let map = try #require(await a.engine.slotMaps?.current)
        // The source last in the map: a read of the map asks the others first.
        let source = try #require(map.shards.last)
        let others = map.shards.dropLast().map(\.master.address.port)
        let topic = try #require((0..<100_000).lazy.map { "moved-\($0)" }
            .first { name in source.slots.contains { $0.contains(HashSlot(key: name).value) } })
        #expect(try await a.publish(topic, .events, "v1").id == 1)
        try await cluster.moveSlot(HashSlot(key: topic).value, toPort: others[0])
        for port in others { cluster.server(port: port)!.pause() }
        let started = ContinuousClock.now
        let refused: PublishError? = await #expect(throws: PublishError.self) { try await a.publish(topic, .events, "v2") }
        let took = ContinuousClock.now - started
        #expect(refused.map { if case .unavailable = $0 { true } else { false } } ?? false)
        for port in others { cluster.server(port: port)!.resume() }
        #expect(took < .milliseconds(900), "refused after \(took), past the 400 ms command timeout")
        await a.stop()
    }

    /// A master lost without a replica: only its shard is down. `/readyz` says not ready
    /// and names that shard; its topics' publishes are refused at once; topics on the
    /// other masters are published and streamed as before.
    @Test func aLostMasterStopsOnlyItsShard() async throws {
        let cluster = try await RedisCluster.startWithoutReplicas()
        let a = try RunningEngine(cluster.url)
        try await a.ready()
        let byPort = try await Self.topicsOnEveryMaster(cluster, perMaster: 1)
        let lostPort = try #require(byPort.keys.sorted().first)
        await cluster.server(port: lostPort)!.kill()
        let deadline = ContinuousClock.now + .seconds(5)
        while a.engine.isReady, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(!a.engine.isReady)
        #expect(a.engine.notReadyReason?.contains("shard 127.0.0.1:\(lostPort)") == true, "\(a.engine.notReadyReason ?? "")")
        let asked = ContinuousClock.now
        let refused = await #expect(throws: PublishError.self) { try await a.publish(byPort[lostPort]![0], .events, "x") }
        #expect(refused.map { if case .unavailable = $0 { true } else { false } } ?? false)
        #expect(ContinuousClock.now - asked < .milliseconds(500))
        for (port, topics) in byPort where port != lostPort {
            let stream = try await a.subscribe(topics[0])
            #expect(try await a.publish(topics[0], .events, "y").id == 1)
            #expect(try await stream.events(1).compactMap(\.number) == [1])
            stream.cancel()
        }
        await a.stop()
    }

    /// A master killed under publishing, its replica promoted: its topics' publishes are
    /// refused until the new master serves, then acknowledged again within the promotion
    /// plus 2 s; a stream of the topic keeps going with ids only going up; the other
    /// shards never stopped.
    @Test func aPromotedReplicaServesTheShardAgain() async throws {
        let cluster = try await RedisCluster.start()
        let (a, b) = (try RunningEngine(cluster.url), try RunningEngine(cluster.url))
        try await a.ready()
        try await b.ready()
        let byPort = try await Self.topicsOnEveryMaster(cluster, perMaster: 1)
        let lostPort = try #require(byPort.keys.sorted().first)
        let topic = byPort[lostPort]![0]
        let stream = try await b.subscribe(topic)
        for index in 1...5 { #expect(try await a.publish(topic, .events, "v\(index)").id == UInt64(index)) }
        await cluster.server(port: lostPort)!.kill()
        let other = try #require(byPort.first { $0.key != lostPort }?.value[0])
        #expect(try await a.publish(other, .events, "still").id == 1, "another shard keeps serving")
        _ = try await cluster.waitForPromotion(servingSlot: HashSlot(key: topic).value, formerMasterPort: lostPort)
        let promoted = ContinuousClock.now
        var id: UInt64?
        while id == nil, ContinuousClock.now - promoted < .seconds(5) {
            id = try? await a.publish(topic, .events, "after").id
            if id == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        let back = ContinuousClock.now - promoted
        #expect(id.map { $0 > 5 } == true, "ids go on after the failover: \(String(describing: id))")
        #expect(back < .seconds(2) + .milliseconds(1500), "served again \(back) after the promotion")
        let events = try await stream.events(6)
        let numbers = events.compactMap(\.number)
        #expect(Array(numbers.prefix(5)) == [1, 2, 3, 4, 5])
        #expect(zip(numbers, numbers.dropFirst()).allSatisfy { $0 < $1 }, "ids only go up: \(numbers)")
        #expect((a.engine.metrics.first { $0.name == "sse_gateway_redis_failovers_total" }?.value ?? 0) >= 1)
        stream.cancel()
        await a.stop()
        await b.stop()
    }

    /// A master silent (SIGSTOP) with a replica: its shard's probe does not come back, so
    /// the link is given up although its sockets look fine; once the replica is promoted the
    /// shard's topics are served again there and a stream of one keeps getting its values.
    @Test func aSilentMasterIsFoundByItsShardsProbe() async throws {
        let cluster = try await RedisCluster.start()
        let (a, b) = (try RunningEngine(cluster.url), try RunningEngine(cluster.url))
        try await a.ready()
        try await b.ready()
        let byPort = try await Self.topicsOnEveryMaster(cluster, perMaster: 1)
        let silentPort = try #require(byPort.keys.sorted().first)
        let topic = byPort[silentPort]![0]
        let stream = try await b.subscribe(topic)
        #expect(try await a.publish(topic, .events, "before").id == 1)
        cluster.server(port: silentPort)!.pause()
        defer { cluster.server(port: silentPort)!.resume() }
        let stopped = ContinuousClock.now
        // Given up: not ready, or already linked again (a slot map naming the promoted replica
        // at the same moment abandons the attempt on the silent one at once, so the time
        // without a link may be shorter than a poll).
        func reconnects() -> UInt64 { b.engine.metrics.first { $0.name == "sse_gateway_redis_reconnects_total" }?.value ?? 0 }
        let before = reconnects()
        while b.engine.isReady, reconnects() == before, ContinuousClock.now - stopped < .seconds(10) {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(!b.engine.isReady || reconnects() > before, "the shard's probe found the silent master")
        _ = try await cluster.waitForPromotion(servingSlot: HashSlot(key: topic).value, formerMasterPort: silentPort)
        var id: UInt64?
        let promoted = ContinuousClock.now
        while id == nil, ContinuousClock.now - promoted < .seconds(10) {
            id = try? await a.publish(topic, .events, "after").id
            if id == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect((id ?? 0) > 1)
        let numbers = try await stream.events(2).compactMap(\.number)
        #expect(numbers.first == 1 && numbers.count == 2 && numbers[1] > 1, "\(numbers)")
        stream.cancel()
        await a.stop()
        await b.stop()
    }
}
