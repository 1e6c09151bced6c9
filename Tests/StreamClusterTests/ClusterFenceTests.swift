import Locking
import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// A new subscriber's fence ends with the event that settles it, not on a timer
/// (`ClusterEngine+Fence`). Redis's `CLIENT PAUSE WRITE` holds the topic's sync (a
/// script) so that the fence cannot be reached; the fence timeout is far longer than
/// anything measured here.
@Suite(.timeLimit(.minutes(1)))
struct ClusterFenceTests {
    private static func configure(_ configuration: inout ClusterConfiguration) {
        configuration.fenceTimeout = .seconds(20)
    }

    /// Starts a subscription that waits for its fence (the sync held by the pause).
    private func fenced(_ engine: RunningEngine, _ topic: String) async throws -> Task<Subscription, any Error> {
        let task = Task { try await engine.subscribe(topic) }
        #expect(try await eventually { await engine.engine.fenceState(topic) == (waiting: 1, arriving: 1) },
                "the subscriber never waited for its fence")
        return task
    }

    /// A client that leaves while its subscriber waits for its fence leaves at once: no
    /// fence, no arrival and no subscriber is left counted anywhere.
    @Test func aSubscriberWhoseClientLeavesWhileFencedLeavesAtOnce() async throws {
        try await withCluster(engines: 1, Self.configure) { redis, engines in
            let a = engines[0]
            _ = try await redis.run(["CLIENT", "PAUSE", "3000", "WRITE"])
            let task = try await fenced(a, "held")
            let start = ContinuousClock.now
            task.cancel()
            await #expect(throws: SubscribeError.unavailable) { try await task.value }
            #expect(ContinuousClock.now - start < .seconds(1), "the wait outlived its client")
            #expect(await a.engine.fenceState("held") == (waiting: 0, arriving: 0))
            #expect(await a.engine.snapshot().eventsSubscribers == 0)
            _ = try await redis.run(["CLIENT", "UNPAUSE"])
        }
    }

    /// A fence waiting when the link is lost is refused then, not at its timeout.
    @Test func aLostLinkRefusesTheFenceAtOnce() async throws {
        try await withCluster(engines: 1, Self.configure) { redis, engines in
            let a = engines[0]
            _ = try await redis.run(["CLIENT", "PAUSE", "3000", "WRITE"])
            let task = try await fenced(a, "held")
            let start = ContinuousClock.now
            _ = try await redis.run(["CLIENT", "KILL", "TYPE", "pubsub"])
            await #expect(throws: SubscribeError.unavailable) { try await task.value }
            #expect(ContinuousClock.now - start < .seconds(2), "refused only at the fence's timeout")
            #expect(await a.engine.fenceState("held") == (waiting: 0, arriving: 0))
            _ = try await redis.run(["CLIENT", "UNPAUSE"])
        }
    }

    /// The sync that brings the mirror to the fence starts the subscriber, as soon as Redis answers it.
    @Test func theSyncThatReachesTheFenceStartsTheSubscriber() async throws {
        try await withCluster(engines: 2, Self.configure) { redis, engines in
            let (a, b) = (engines[0], engines[1])
            for index in 1...3 { _ = try await b.publish("held", .events, "e\(index)") }
            _ = try await redis.run(["CLIENT", "PAUSE", "3000", "WRITE"])
            let task = try await fenced(a, "held")
            _ = try await redis.run(["CLIENT", "UNPAUSE"])
            let start = ContinuousClock.now
            let subscription = try await task.value
            #expect(ContinuousClock.now - start < .seconds(2))
            _ = try await b.publish("held", .events, "e4")
            #expect(try await subscription.events(1).first?.number == 4)
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
