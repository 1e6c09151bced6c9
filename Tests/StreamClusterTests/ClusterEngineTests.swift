import Locking
import RedisClient
@testable import StreamCluster
import StreamHub
import Synchronization
import Testing
import TestSupport

/// Two or more engines on one real redis-server behave as one hub (API.md, "A cluster of gateways on Redis").
@Suite(.timeLimit(.minutes(1)))
struct ClusterEngineTests {
    /// Ids come from Redis: contiguous across gateways with publishers on both, each id seen once, in order, everywhere.
    @Test func idsAreContiguousAcrossGatewaysWithPublishersOnBoth() async throws {
        try await withCluster { _, engines in
            let (a, b) = (engines[0], engines[1])
            let onA = try await a.subscribe("orders")
            let onB = try await b.subscribe("orders")
            async let fromA = (0..<150).asyncMap { try await a.publish("orders", .events, "a\($0)").id }
            async let fromB = (0..<150).asyncMap { try await b.publish("orders", .events, "b\($0)").id }
            let ids = try await fromA + fromB
            #expect(ids.sorted() == Array(1...300))
            for subscription in [onA, onB] {
                let events = try await subscription.events(300)
                #expect(events.compactMap(\.number) == Array(1...300))
            }
        }
    }

    /// A new state subscriber on one gateway never starts older than a publish acknowledged on another, and never sees a value twice.
    @Test func stateSnapshotIsNeverOlderThanAnAcknowledgedPublish() async throws {
        try await withCluster { _, engines in
            let (a, b) = (engines[0], engines[1])
            let acknowledged = Atomic<UInt64>(0)
            let done = Atomic<Bool>(false)
            async let publishing: Void = {
                for index in 1...3000 where !done.load(ordering: .relaxed) {
                    let result = try await a.publish("room", .state, "v\(index)")
                    acknowledged.store(result.id, ordering: .relaxed)
                }
            }()
            for _ in 0..<20 {
                let floor = acknowledged.load(ordering: .relaxed)
                let subscription = try await b.subscribe("room", .state)
                let events = try await subscription.events(3)
                let ids = events.compactMap(\.number)
                #expect(ids.first ?? 0 >= floor, "first value \(ids) older than acknowledged \(floor)")
                #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids \(ids) went back or repeated")
                subscription.cancel()
            }
            done.store(true, ordering: .relaxed)
            try await publishing
        }
    }

    /// Last-Event-ID resumes on a gateway that never saw the topic, from Redis's window, then goes live.
    @Test func resumesOnAnotherGatewayFromTheWindow() async throws {
        try await withCluster { _, engines in
            let (a, b) = (engines[0], engines[1])
            for index in 1...10 { _ = try await a.publish("feed", .events, "e\(index)") }
            let resumed = try await b.subscribe("feed", after: 4)
            _ = try await a.publish("feed", .events, "e11")
            let events = try await resumed.events(7)
            #expect(events.compactMap(\.number) == Array(5...11))
            #expect(events.first?.data == "e5")
        }
    }

    /// A resume older than the shared window gets `gap` with the first id it can no longer have, then what is held.
    @Test func gapWhenTheWindowNoLongerHoldsIt() async throws {
        try await withCluster({ $0.hub.replayCount = 3 }) { _, engines in
            let (a, b) = (engines[0], engines[1])
            for index in 1...10 { _ = try await a.publish("feed", .events, "e\(index)") }
            let resumed = try await b.subscribe("feed", after: 2)
            let events = try await resumed.events(4)
            #expect(events.first?.event == "gap" && events.first?.data == "3")
            #expect(events.dropFirst().compactMap(\.number) == [8, 9, 10])
            #expect(b.engine.counters.gapEvents == 1)
        }
    }

    /// Ids Redis's window skips (its counter raised past values a failover lost) are a `gap` for
    /// a gateway that mirrors the topic afresh: a resume from before them gets what is held
    /// before them, a `gap` at the first, then the rest; never replayed across as if nothing was lost.
    @Test func aHoleInTheSharedWindowIsAGap() async throws {
        try await withCluster { redis, engines in
            let (a, b) = (engines[0], engines[1])
            for index in 1...3 { _ = try await a.publish("holed", .events, "e\(index)") }
            _ = try await redis.run(["HSET", "sse:{holed}:id", "events", "9"])
            #expect(try await a.publish("holed", .events, "e10").id == 10)
            let resumed = try await b.subscribe("holed", after: 2)
            let events = try await resumed.events(3)
            #expect(events.map(\.number) == [3, 3, 10])  // A gap has no id of its own: the last one stays.
            #expect(events.map(\.event) == [nil, "gap", nil])
            #expect(events.map(\.data) == ["e3", "4", "e10"])
            let live = try await b.subscribe("holed", after: 10)
            _ = try await a.publish("holed", .events, "e11")
            #expect(try await live.events(1).first?.number == 11)
        }
    }

    /// The window's age limit holds across gateways: events older than --replay-max-age are not replayed (a `gap` says so), and a Last-Event-ID newer than the topic's last id is treated as absent.
    @Test func theWindowsAgeAndANewerLastEventID() async throws {
        try await withCluster({ $0.hub.replayMaxAge = .seconds(1) }) { _, engines in
            let (a, b) = (engines[0], engines[1])
            for index in 1...3 { _ = try await a.publish("aging", .events, "old\(index)") }
            try await Task.sleep(for: .milliseconds(1300))
            _ = try await a.publish("aging", .events, "young")
            let resumed = try await b.subscribe("aging", after: 0)
            let events = try await resumed.events(2)
            #expect(events.first?.event == "gap" && events.first?.data == "1")
            #expect(events.last?.number == 4 && events.last?.data == "young")
            let ahead = try await b.subscribe("aging", after: 99)
            _ = try await a.publish("aging", .events, "live")
            #expect(try await ahead.events(1).first?.number == 5)
        }
    }

    /// State values and replay windows live in Redis: a gateway started after every other stopped has them.
    @Test func stateAndWindowSurviveRestartingEveryGateway() async throws {
        let redis = try await RedisServer.start()
        defer { Task { await redis.stop() } }
        let first = try RunningEngine(redis.url)
        try await first.ready()
        _ = try await first.publish("dash", .state, "one")
        _ = try await first.publish("dash", .state, "two")
        for index in 1...5 { _ = try await first.publish("dash", .events, "e\(index)") }
        await first.stop()

        let second = try RunningEngine(redis.url)
        try await second.ready()
        let state = try await second.subscribe("dash", .state).events(1)
        #expect(state.first?.data == "two" && state.first?.number == 2)
        let events = try await second.subscribe("dash", .events, after: 3).events(2)
        #expect(events.compactMap(\.number) == [4, 5])
        #expect(try await second.publish("dash", .events, "e6").id == 6)
        await second.stop()
    }

    /// Redis away: publishes and subscriptions refused at once, open streams kept; back with its data: they get what was published meanwhile, once.
    @Test func redisAwayThenBackWithItsData() async throws {
        try await withCluster(engines: 1) { redis, engines in
            let a = engines[0]
            let open = try await a.subscribe("live")
            for index in 1...3 { _ = try await a.publish("live", .events, "e\(index)") }
            #expect(try await open.events(3).compactMap(\.number) == [1, 2, 3])

            await redis.kill()
            let asked = ContinuousClock.now
            let refused = await #expect(throws: PublishError.self) { try await a.publish("live", .events, "lost") }
            #expect(refused.map { if case .unavailable = $0 { true } else { false } } ?? false)
            #expect(ContinuousClock.now - asked < .seconds(1))
            await #expect(throws: SubscribeError.unavailable) { try await a.subscribe("live") }
            #expect(!a.engine.isReady)
            #expect(open.finishReason == nil)

            try await Task.sleep(for: .milliseconds(800))
            try await redis.start(keepData: true)
            // Published by someone else before this gateway is back (its retries wait up to
            // 500 ms; should it link first, it finds Redis restarted and publishes pause
            // until it has raised its topics' ids, which `publishDirectly` waits out).
            let meanwhile = try await publishDirectly(to: redis.url, topic: "live", ["m4", "m5"],
                                                      configuration: a.engine.configuration)
            #expect(meanwhile == [4, 5])
            try await a.ready()
            _ = try await a.publish("live", .events, "e6")
            let events = try await open.events(3)
            #expect(events.compactMap(\.number) == [4, 5, 6])
            #expect(events.map(\.data) == ["m4", "m5", "e6"])
        }
    }

    /// Redis back empty: the gateway's ids become Redis's floor, so ids never go backwards for its subscribers.
    @Test func idsNeverGoBackwardsWhenRedisComesBackEmpty() async throws {
        try await withCluster { redis, engines in
            let (a, b) = (engines[0], engines[1])
            let events = try await a.subscribe("count")
            let state = try await a.subscribe("count", .state)
            for index in 1...5 { _ = try await a.publish("count", .events, "e\(index)") }
            _ = try await a.publish("count", .state, "s1")
            #expect(try await events.events(5).count == 5)
            #expect(try await state.events(1).first?.number == 1)

            await redis.kill()
            try await redis.start(keepData: false)
            try await b.ready()
            // B, which does not follow the topic, publishes as soon as it can: refused
            // while the gateways restore the ids, then past what A's subscribers have had.
            var id: UInt64?
            let deadline = ContinuousClock.now + .seconds(10)
            while id == nil, ContinuousClock.now < deadline {
                do {
                    id = try await b.publish("count", .events, "e6").id
                } catch PublishError.unavailable {
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(id == 6)
            #expect(try await events.events(1).first?.number == 6)
            #expect(try await b.publish("count", .state, "s2").id == 2)
            #expect(try await state.events(1).first?.number == 2)
        }
    }

    /// Redis restarted from a save older than its last publishes (its AOF stopped after
    /// the third; the next three were acknowledged and delivered): its epoch is the same,
    /// its run_id not. B, whose subscriber had them, comes back late (its link through a
    /// proxy, cut for 300 ms, then its back-off); A, which does not follow the topic,
    /// publishes as soon as it can: it gets the id after what B's subscriber had, and that
    /// subscriber gets it. Before, the restart was taken for a reconnect and A's publish
    /// got id 4 again. (B's liveness in the save is made to outlast its back-off, and the
    /// pause may last 10 s, so that the pause waits for B however slow the machine.)
    @Test func aRedisBackFromAnOlderSaveKeepsIDsGoingForward() async throws {
        let redis = try await RedisServer.start()
        let proxy = try await LinkProxy.start(to: redis.port)
        let a = try RunningEngine(redis.url) { $0.failoverPause = .seconds(10) }
        let b = try RunningEngine(proxy.url) { $0.failoverPause = .seconds(10) }
        try await stoppingAfterwards({
            await a.stop()
            await b.stop()
            await proxy.stop()
            await redis.stop()
        }) {
            try await a.ready()
            try await b.ready()
            let open = try await b.subscribe("rolled-back")
            for index in 1...3 { _ = try await b.publish("rolled-back", .events, "b\(index)") }
            _ = try await redis.run(["PEXPIRE", ShardKeys.global.gateway(b.engine.configuration.gatewayID), "10000"])
            _ = try await redis.run(["CONFIG", "SET", "appendonly", "no"])  // What Redis saves ends here.
            for index in 4...6 { _ = try await b.publish("rolled-back", .events, "b\(index)") }
            #expect(try await open.events(6).compactMap(\.number) == Array(1...6))
            try await proxy.cut()
            await redis.kill()
            try await redis.start(keepData: true)
            #expect(try await redis.run(["HGET", "sse:{rolled-back}:id", "events"]).string == "3")
            let restore = Task {
                try await Task.sleep(for: .milliseconds(300))
                try await proxy.restore()
            }
            let id = try await a.publishOnceTaken("rolled-back", "a1", every: .milliseconds(20))
            try await restore.value
            #expect(id == 7)
            let next = try await open.events(1)
            #expect(next.first?.number == 7 && next.first?.data == "a1", "\(next)")
        }
    }

    /// Two clusters on two databases of one Redis server (`/0` and `/3`): pub/sub is the
    /// server's, yet each cluster's subscribers get their own cluster's values only, and
    /// its ids are its own. Before, both subscribers got both values (and the second
    /// cluster's first publish got id 2).
    @Test func clustersOnTwoDatabasesOfOneServerAreApart() async throws {
        let redis = try await RedisServer.start()
        let zero = try RunningEngine(redis.url + "/0")
        let three = try RunningEngine(redis.url + "/3")
        try await stoppingAfterwards({
            await zero.stop()
            await three.stop()
            await redis.stop()
        }) {
            try await zero.ready()
            try await three.ready()
            let zeroStream = try await zero.subscribe("orders")
            let threeStream = try await three.subscribe("orders")
            #expect(try await zero.publish("orders", .events, "tenant 0").id == 1)
            #expect(try await three.publish("orders", .events, "tenant 3").id == 1)
            #expect(try await zero.publish("orders", .events, "tenant 0 again").id == 2)
            let zeroGot = try await zeroStream.events(2)
            #expect(zeroGot.map(\.data) == ["tenant 0", "tenant 0 again"] && zeroGot.compactMap(\.number) == [1, 2])
            let threeGot = try await threeStream.events(1)
            #expect(threeGot.map(\.data) == ["tenant 3"] && threeGot.compactMap(\.number) == [1])
            // Nothing of database 0's reaches database 3's subscriber.
            #expect((try? await threeStream.events(1, within: 0.5)) == nil)
        }
    }

    /// A client resuming a topic Redis holds no ids for (Redis lost them) raises the topic's ids past its Last-Event-ID.
    @Test func aResumeAboveWhatRedisHoldsKeepsIdsGoingForward() async throws {
        try await withCluster(engines: 1) { _, engines in
            let a = engines[0]
            let resumed = try await a.subscribe("after-loss", after: 40)
            #expect(try await a.publish("after-loss", .events, "next").id == 41)
            #expect(try await resumed.events(1).first?.number == 41)
        }
    }

    /// A gateway started while Redis is down starts anyway, not ready, and becomes ready when Redis does.
    @Test func aGatewayStartedBeforeRedisBecomesReady() async throws {
        let redis = try await RedisServer.start()
        await redis.kill()
        let engine = try RunningEngine(redis.url)
        try await Task.sleep(for: .milliseconds(300))
        #expect(!engine.engine.isReady)
        let refused = await #expect(throws: PublishError.self) { try await engine.publish("t", .events, "x") }
        #expect(refused.map { if case .unavailable = $0 { true } else { false } } ?? false)
        try await redis.start(keepData: false)
        try await engine.ready(within: 5)
        #expect(try await engine.publish("t", .events, "x").id == 1)
        await engine.stop()
        await redis.stop()
    }

    /// `subscribers` in a publish reply counts every gateway's subscribers; a gateway that stops drops out.
    @Test func publishRepliesCountEveryGatewaysSubscribers() async throws {
        try await withCluster(engines: 3) { _, engines in
            let (a, b, c) = (engines[0], engines[1], engines[2])
            var held: [Subscription] = []
            for _ in 0..<3 { held.append(try await a.subscribe("news")) }
            for _ in 0..<2 { held.append(try await b.subscribe("news")) }
            #expect(try await eventually { try await c.publish("news", .events, "x").subscribers == 5 })
            await b.stop()
            #expect(try await eventually { try await c.publish("news", .events, "x").subscribers == 3 })
            _ = held
        }
    }

    /// A stalled subscriber is disconnected on its own gateway; readers there and elsewhere get everything.
    @Test func aStalledSubscriberHoldsUpNobody() async throws {
        // The limit leaves the readers room to lag behind under a loaded machine; the stalled one never reads.
        try await withCluster({ $0.hub.eventsQueueLimit = 100 }) { _, engines in
            let (a, b) = (engines[0], engines[1])
            let stalled = try await a.subscribe("firehose")
            let readerA = try await a.subscribe("firehose")
            let readerB = try await b.subscribe("firehose")
            async let gotA = readerA.events(1000, within: 60)
            async let gotB = readerB.events(1000, within: 60)
            for index in 1...1000 { _ = try await b.publish("firehose", .events, "e\(index)") }
            #expect(try await gotA.compactMap(\.number) == Array(1...1000), "reader on A: \(String(describing: readerA.finishReason))")
            #expect(try await gotB.compactMap(\.number) == Array(1...1000), "reader on B: \(String(describing: readerB.finishReason))")
            #expect(stalled.finishReason == .overflow)
        }
    }

    /// A topic nobody here subscribes to any more is let go: unsubscribed in Redis and forgotten by the hub.
    @Test func topicsNobodyFollowsAreLetGo() async throws {
        try await withCluster(engines: 1, { $0.followLinger = .milliseconds(300) }) { redis, engines in
            let a = engines[0]
            let subscription = try await a.subscribe("brief")
            _ = try await a.publish("brief", .events, "x")
            #expect(try await subscription.events(1).count == 1)
            subscription.cancel()
            await a.engine.sweep()
            #expect(await a.engine.snapshot().topics == 1, "let go before the linger")
            try await Task.sleep(for: .milliseconds(400))
            await a.engine.sweep()
            #expect(await a.engine.snapshot().topics == 0)
            #expect(try await eventually { try await redis.run(["PUBSUB", "NUMSUB", "sse:t:brief"]).array?.last?.integer == 0 })
            // Following it again starts from Redis's copy.
            let again = try await a.subscribe("brief", after: 0)
            #expect(try await again.events(1).first?.number == 1)
        }
    }

    /// A Redis that forgot the scripts (restarted, SCRIPT FLUSH) still takes publishes: NOSCRIPT falls back to EVAL.
    @Test func publishesSurviveAScriptFlush() async throws {
        try await withCluster(engines: 1) { redis, engines in
            #expect(try await engines[0].publish("t", .events, "1").id == 1)
            _ = try await redis.run(["SCRIPT", "FLUSH"])
            #expect(try await engines[0].publish("t", .events, "2").id == 2)
        }
    }

    /// A single server's node turned replica (`REPLICAOF`, a failover done by hand): the
    /// engine is not ready and says no master is known, as its publishes are refused, until
    /// the node is a master again; then it serves, its ids going on.
    @Test func aServerTurnedReplicaIsNotReadyUntilItIsAMasterAgain() async throws {
        let other = try await RedisServer.start()
        try await stoppingAfterwards({ await other.stop() }) {
            try await withCluster(engines: 1) { redis, engines in
                let engine = engines[0]
                #expect(try await engine.publish("turned", .events, "1").id == 1)
                _ = try await redis.run(["REPLICAOF", "127.0.0.1", String(other.port)])
                #expect(try await eventually(within: 10) {
                    engine.engine.notReadyReason?.contains("no Redis master is known") == true
                }, "\(engine.engine.notReadyReason ?? "ready")")
                await #expect(throws: (any Error).self) { try await engine.publish("turned", .events, "refused") }
                #expect(engine.engine.notReadyReason?.contains("no Redis master is known") == true,
                        "still not ready while it is a replica: \(engine.engine.notReadyReason ?? "ready")")
                _ = try await redis.run(["REPLICAOF", "NO", "ONE"])
                try await engine.ready(within: 15)
                var id: UInt64?
                let deadline = ContinuousClock.now + .seconds(10)
                while id == nil, ContinuousClock.now < deadline {
                    id = try? await engine.publish("turned", .events, "2").id
                    if id == nil { try await Task.sleep(for: .milliseconds(100)) }
                }
                #expect((id ?? 0) > 1, "the ids go on past what the gateway holds")
            }
        }
    }

    /// A Redis that refuses writes (`maxmemory` reached with `noeviction`): within a heartbeat or
    /// two the engine is not ready and says why, Redis's `OOM` included (its publishes are refused
    /// anyway), while a new subscription is still served — but for a resume past ids Redis does not
    /// hold, which would have to raise them (served without, its ids would start below the one the
    /// client had). Once Redis takes writes again it is ready, the subscriber gets the next publish,
    /// and the resume is served, its next id above the one it had.
    @Test func aRedisRefusingWritesIsNotReadyButServesSubscriptions() async throws {
        try await withCluster(engines: 1) { redis, engines in
            let engine = engines[0]
            #expect(try await engine.publish("full", .events, "1").id == 1)
            _ = try await redis.run(["CONFIG", "SET", "maxmemory-policy", "noeviction"])
            _ = try await redis.run(["CONFIG", "SET", "maxmemory", "1"])
            #expect(try await eventually(within: 10) { engine.engine.notReadyReason?.contains("refuses writes") == true },
                    "\(engine.engine.notReadyReason ?? "ready")")
            #expect(engine.engine.notReadyReason?.contains("OOM") == true && !engine.engine.isReady)
            await #expect(throws: (any Error).self) { try await engine.publish("full", .events, "refused") }
            let subscription = try await engine.subscribe("full")
            await #expect(throws: SubscribeError.unavailable) { _ = try await engine.subscribe("empty", after: 41) }
            _ = try await redis.run(["CONFIG", "SET", "maxmemory", "0"])
            try await engine.ready(within: 10)
            #expect(try await engine.publish("full", .events, "2").id == 2)
            #expect(try await subscription.events(1).first?.data == "2")
            let resumed = try await engine.subscribe("empty", after: 41)
            #expect(try await engine.publish("empty", .events, "next").id == 42)
            #expect(try await resumed.events(1).first?.number == 42)
        }
    }

    /// An ACL user without `@dangerous` (the Redis docs' own example user), for whom `ROLE`
    /// is refused: a single server is linked and serves all the same (its turning replica is
    /// then found by a publish's `READONLY`); the refusal is logged once.
    @Test func anACLUserWithoutRoleIsServed() async throws {
        let redis = try await RedisServer.start()
        try await stoppingAfterwards({ await redis.stop() }) {
            _ = try await redis.run(["ACL", "SETUSER", "gateway", "on", ">secret", "~*", "&*", "+@all", "-@dangerous"])
            let lines = Locked<[String]>([])
            let url = "redis://gateway:secret@127.0.0.1:\(redis.port)"
            let running = try RunningEngine(url) { configuration in
                configuration.log = { line in lines.withLock { $0.append(line) } }
            }
            try await stoppingAfterwards({ await running.stop() }) {
                try await running.ready()
                let open = try await running.subscribe("acl")
                #expect(try await running.publish("acl", .events, "one").id == 1)
                #expect(try await open.events(1).first?.data == "one")
                try await Task.sleep(for: .milliseconds(1200))  // A heartbeat asks ROLE too.
                #expect(running.engine.isReady)
                #expect(lines.withLock { $0.filter { $0.contains("ROLE refused") }.count } == 1, "\(lines.withLock { $0 })")
            }
        }
    }

    /// `FLUSHALL` under live links (an operator's slip): the gateways notice within a heartbeat
    /// that the epoch is gone, link anew and restore the ids, so a publish through a gateway
    /// that follows nothing goes on past what a subscriber of the other already had, and that
    /// subscriber gets it (before, ids began again at 1 and the subscriber skipped them).
    @Test func aFlushAllUnderLiveLinksIsNoticed() async throws {
        try await withCluster { redis, engines in
            let (a, b) = (engines[0], engines[1])
            let open = try await b.subscribe("flushed")
            for index in 1...3 { _ = try await a.publish("flushed", .events, "before\(index)") }
            #expect(try await open.events(3).compactMap(\.number) == [1, 2, 3])
            _ = try await redis.run(["FLUSHALL"])
            try await Task.sleep(for: .milliseconds(2500))  // Two heartbeats: both gateways have looked.
            let id = try await a.publishOnceTaken("flushed", "after")
            #expect((id ?? 0) > 3, "ids go on past what B's subscriber had: \(id.map { "\($0)" } ?? "none")")
            let next = try await open.events(1)
            #expect(next.first?.number == id && next.first?.data == "after", "\(next)")
        }
    }

    /// `FLUSHALL` under live links, and a publish at once, before any heartbeat looked:
    /// the publish script finds the epoch gone (or, `reseeded`, another: a gateway that
    /// never knew the old Redis seeded it meanwhile) and refuses it, nothing stored; the
    /// gateway links anew, and the next publish that is stored goes on past what the other
    /// gateway's subscriber had, which gets it. Before, that publish was stored with id 1
    /// and the subscriber skipped it.
    @Test(arguments: [false, true])
    func aPublishRightAfterAFlushAllIsRefusedNotGivenAnOldID(reseeded: Bool) async throws {
        try await withCluster { redis, engines in
            let (a, b) = (engines[0], engines[1])
            let open = try await b.subscribe("flushed-now")
            for index in 1...3 { _ = try await a.publish("flushed-now", .events, "before\(index)") }
            #expect(try await open.events(3).compactMap(\.number) == [1, 2, 3])
            _ = try await redis.run(["FLUSHALL"])
            if reseeded { _ = try await redis.run(["SET", ShardKeys.global.epoch, "seeded-by-a-newcomer"]) }
            do throws(PublishError) {
                let id = try await a.engine.publish(topic: "flushed-now", channel: .events, data: "at once", event: nil).id
                Issue.record("a publish right after FLUSHALL was stored with id \(id)")
            } catch .unavailable {
                // Refused: by the script, or (a heartbeat that looked first) by the pause or the new link.
            } catch {
                Issue.record("\(error)")
            }
            let id = try await a.publishOnceTaken("flushed-now", "after")
            #expect((id ?? 0) > 3, "ids go on past what B's subscriber had: \(id.map { "\($0)" } ?? "none")")
            let next = try await open.events(1)
            #expect(next.first?.number == id && next.first?.data == "after", "\(next)")
            // "at once" was not stored: the window Redis holds since the flush is "after" alone.
            #expect(try await redis.run(["XLEN", "sse:{flushed-now}:events"]).integer == 1)
        }
    }

    /// A pub/sub connection killed under a gateway: it reconnects, and open streams miss nothing and see nothing twice.
    @Test func aKilledPubSubConnectionIsNoticedAndHealed() async throws {
        try await withCluster { redis, engines in
            let (a, b) = (engines[0], engines[1])
            let open = try await a.subscribe("heal")
            for index in 1...5 { _ = try await b.publish("heal", .events, "e\(index)") }
            #expect(try await open.events(5).compactMap(\.number) == Array(1...5))
            _ = try await redis.run(["CLIENT", "KILL", "TYPE", "pubsub"])
            for index in 6...10 { _ = try? await b.publish("heal", .events, "e\(index)") }
            try await a.ready()
            #expect(try await eventually { a.engine.metrics.first { $0.name == "sse_gateway_redis_reconnects_total" }?.value ?? 0 >= 1 })
            try await b.ready()
            // Publishes refused while B reconnected consumed no id: the stream gets 6 through the last, once each.
            let last = try await b.publish("heal", .events, "e11").id
            let events = try await open.events(Int(last) - 5)
            #expect(events.compactMap(\.number) == Array(6...last))
        }
    }
}

/// Polls `condition` for up to `seconds`: it returns as soon as the condition holds, so the
/// bound only lengthens a failure. 15 s: at the start of a CI run, when every suite starts
/// its redis-servers at once on 2 cores, a link took 6–8 s to come up (a run of 2026-12-06
/// failed three tests at 5 s; each passes alone in under a second).
func eventually(within seconds: Double = 15, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    repeat {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(100))
    } while ContinuousClock.now < deadline
    return false
}

extension Sequence where Element: Sendable {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
