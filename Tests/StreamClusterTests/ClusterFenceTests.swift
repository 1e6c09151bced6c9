import Locking
import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// A new subscriber's fence ends with the event that settles it, not on a timer
/// (`ClusterEngine+Fence`). The topic's window key is made a string, so that its sync
/// fails (`WRONGTYPE`, retried) and the fence cannot be reached until the key is gone;
/// the fence timeout is far longer than anything measured here.
@Suite(.timeLimit(.minutes(1)))
struct ClusterFenceTests {
    private static func configure(_ configuration: inout ClusterConfiguration) {
        configuration.fenceTimeout = .seconds(20)
    }

    /// Three events on `topic`, then its window key broken: syncs of it fail from now on.
    private func breakSyncs(_ redis: RedisServer, _ publisher: RunningEngine, _ topic: String) async throws {
        for index in 1...3 { _ = try await publisher.publish(topic, .events, "e\(index)") }
        let window = ClusterKeys(topic: topic).events
        _ = try await redis.run(["DEL", window])
        _ = try await redis.run(["SET", window, "not a stream"])
    }

    /// Starts a subscription that waits for its fence (its topic's syncs failing).
    private func fenced(_ engine: RunningEngine, _ topic: String) async throws -> Task<Subscription, any Error> {
        let task = Task { try await engine.subscribe(topic) }
        #expect(try await eventually { await engine.engine.fenceState(topic) == (waiting: 1, arriving: 1) },
                "the subscriber never waited for its fence")
        return task
    }

    /// A gateway that starts while many topics hold full windows in Redis (a restart
    /// under a reconnect storm) loads every window before its subscribers go live,
    /// which takes longer than `fenceTimeout` for the last ones. They wait while that
    /// catch-up moves on, and every one is served, from the topic's last id (before,
    /// those not live after twice `fenceTimeout` were refused with 503). The catch-up's
    /// time on this machine is measured first, by an engine that waits as long as it
    /// takes; the second engine's `fenceTimeout` is a third of it.
    @Test func subscribersOfAFreshGatewayWaitForItsCatchUp() async throws {
        let redis = try await RedisServer.start()
        let publisher = try RunningEngine(redis.url)
        var engines = [publisher]
        try await stoppingAfterwards({
            for engine in engines { await engine.stop() }
            await redis.stop()
        }) {
            try await publisher.ready()
            let topics = (0..<120).map { "full/\($0)" }
            let value = String(repeating: "v", count: 1_000)
            try await withThrowingDiscardingTaskGroup { group in
                for topic in topics {
                    group.addTask {
                        for _ in 1...256 { _ = try await publisher.publish(topic, .events, value) }
                    }
                }
            }
            func subscribeAll(fenceTimeout: Duration) async throws -> Duration {
                let fresh = try RunningEngine(redis.url) { $0.fenceTimeout = fenceTimeout }
                engines.append(fresh)
                try await fresh.ready()
                let started = ContinuousClock.now
                let subscriptions = try await withThrowingTaskGroup(of: Subscription.self, returning: [Subscription].self) { group in
                    for topic in topics {
                        group.addTask {
                            do {
                                return try await fresh.subscribe(topic)
                            } catch {
                                // Which run refused whom and when (the test fails either way).
                                print("fence: \(topic) refused (\(error)) after \(ContinuousClock.now - started) "
                                      + "with a fence timeout of \(fenceTimeout)")
                                throw error
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                let took = ContinuousClock.now - started
                #expect(subscriptions.count == topics.count)
                #expect(subscriptions.allSatisfy { $0.startPositions == [256] })
                for subscription in subscriptions { subscription.cancel() }
                return took
            }
            let catchUp = try await subscribeAll(fenceTimeout: .seconds(30))
            let fenceTimeout = max(catchUp / 3, .milliseconds(5))
            let took = try await subscribeAll(fenceTimeout: fenceTimeout)
            print("fence: 120 topics of 256 events of 1 kB on a fresh engine live after \(catchUp), "
                  + "then after \(took) with a fence timeout of \(fenceTimeout)")
        }
    }

    /// A client that leaves while its subscriber waits for its fence leaves at once: no
    /// fence, no arrival and no subscriber is left counted anywhere.
    @Test func aSubscriberWhoseClientLeavesWhileFencedLeavesAtOnce() async throws {
        try await withCluster(engines: 1, Self.configure) { redis, engines in
            let a = engines[0]
            try await breakSyncs(redis, a, "held")
            let task = try await fenced(a, "held")
            let start = ContinuousClock.now
            task.cancel()
            await #expect(throws: SubscribeError.unavailable) { try await task.value }
            #expect(ContinuousClock.now - start < .seconds(1), "the wait outlived its client")
            #expect(await a.engine.fenceState("held") == (waiting: 0, arriving: 0))
            #expect(await a.engine.snapshot().eventsSubscribers == 0)
        }
    }

    /// A fence waiting when the link is lost is refused then, not at its timeout.
    @Test func aLostLinkRefusesTheFenceAtOnce() async throws {
        try await withCluster(engines: 1, Self.configure) { redis, engines in
            let a = engines[0]
            try await breakSyncs(redis, a, "held")
            let task = try await fenced(a, "held")
            let start = ContinuousClock.now
            _ = try await redis.run(["CLIENT", "KILL", "TYPE", "pubsub"])
            await #expect(throws: SubscribeError.unavailable) { try await task.value }
            #expect(ContinuousClock.now - start < .seconds(2), "refused only at the fence's timeout")
            #expect(await a.engine.fenceState("held") == (waiting: 0, arriving: 0))
        }
    }

    /// The sync that brings the mirror to the fence starts the subscriber, as soon as it succeeds.
    @Test func theSyncThatReachesTheFenceStartsTheSubscriber() async throws {
        try await withCluster(engines: 2, Self.configure) { redis, engines in
            let (a, b) = (engines[0], engines[1])
            try await breakSyncs(redis, b, "held")
            let task = try await fenced(a, "held")
            _ = try await redis.run(["DEL", ClusterKeys(topic: "held").events])
            let start = ContinuousClock.now
            let subscription = try await task.value
            #expect(ContinuousClock.now - start < .seconds(2))
            _ = try await b.publish("held", .events, "e4")
            #expect(try await subscription.events(1).first?.number == 4)
        }
    }

    /// Clients cancelled at every moment of their arrival (before, while and after their
    /// fence is registered) leave nothing behind: no fence waits on for its timeout.
    @Test func subscribersCancelledWhileArrivingLeaveNoFenceBehind() async throws {
        try await withCluster(engines: 1, Self.configure) { redis, engines in
            let a = engines[0]
            try await breakSyncs(redis, a, "held")
            for round in 0..<200 {
                let task = Task { try await a.subscribe("held") }
                for _ in 0..<(round % 20) { await Task.yield() }
                task.cancel()
                _ = try? await task.value
            }
            let deadline = ContinuousClock.now + .seconds(2)
            while await a.engine.fenceState("held") != (waiting: 0, arriving: 0), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(await a.engine.fenceState("held") == (waiting: 0, arriving: 0), "a fence outlived its subscriber")
        }
    }
}

extension ClusterEngine {
    /// The fences waiting on `topic` and the subscribers arriving at it.
    func fenceState(_ topic: String) -> (waiting: Int, arriving: Int) {
        guard let entry = followed[topic] else { return (0, 0) }
        return (entry.fences.count, entry.arriving)
    }
}
