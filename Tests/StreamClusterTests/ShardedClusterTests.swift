import HTTPCore
import RedisClient
@testable import StreamCluster
@testable import StreamHub
import Testing
import TestSupport

/// A gateway on Redis with several loops (issue 24): a cluster engine on each loop,
/// each mirroring its shard of the topics, one gateway to clients.
struct ShardedClusterTests {
    /// Two cluster engines on two event loops, sharing counters and subscriber ids as
    /// the gateway makes them, running until stopped.
    final class RunningShardedEngine: Sendable {
        let engine: ShardedEngine<ClusterEngine>
        private let task: Task<Void, Never>

        /// - Parameter urls: one Redis per shard (the gateway gives all the same one).
        init(_ urls: [String], _ configure: (inout ClusterConfiguration) -> Void = { _ in }) throws {
            let counters = HubCounters()
            let ids = SubscriberIDs()
            let loops = EventLoop.loops(urls.count)
            engine = ShardedEngine(shards: try zip(urls, loops).map { url, loop in
                var configuration = ClusterConfiguration(redis: try RedisEndpoint(parsing: url))
                configuration.connectTimeout = .milliseconds(500)
                configuration.commandTimeout = .seconds(5)
                configuration.gatewayID = ClusterConfiguration.randomGatewayID()
                configure(&configuration)
                return ClusterEngine(configuration: configuration, executor: loop.actorExecutor, counters: counters,
                                     subscriberIDs: ids)
            })
            task = Task { [engine] in await engine.run() }
        }

        func stop() async {
            await engine.shutdown()
            await task.value
        }

        /// A topic name in shard `index`, distinct per `tag`.
        func topic(inShard index: Int, _ tag: String) -> String {
            (0...).lazy.map { "\(tag)-\($0)" }.first { self.engine.shardIndex(of: $0) == index }!
        }
    }

    /// Each loop's engine follows and mirrors only its own topics; a stream across both
    /// gets every value once and in order from a publisher on another gateway; the
    /// other gateway's publishes count its subscriber; its leaving takes it out of both
    /// shards, and the counts in Redis return to zero.
    @Test func eachLoopMirrorsItsShardOfTheTopics() async throws {
        let redis = try await RedisServer.start()
        let a = try RunningShardedEngine([redis.url, redis.url])
        let b = try RunningEngine(redis.url)
        try await stoppingAfterwards({
            await a.stop()
            await b.stop()
            await redis.stop()
        }) {
            try await b.ready()
            #expect(try await eventually { a.engine.isReady })
            #expect(a.engine.metrics.first { $0.name == "sse_gateway_redis_up" }?.value == 1)
            let x = a.topic(inShard: 0, "x")
            let y = a.topic(inShard: 1, "y")
            _ = try await b.publish(x, .events, "before")

            let stream = try await a.engine.subscribe(topics: .tagged([x, y]), channel: .events, resumeAfter: nil)
            #expect(stream.startPositions == [1, 0])
            for index in 1...10 {
                _ = try await b.publish(x, .events, "x\(index)")
                _ = try await b.publish(y, .events, "y\(index)")
            }
            var marks: [FrameMark] = []
            while marks.count < 20, let batch = await stream.nextMarkedBatch() { marks += batch.marks.filter { $0.id > 0 } }
            #expect(marks.filter { $0.slot == 0 }.map(\.id) == (2...11).map { UInt64($0) })
            #expect(marks.filter { $0.slot == 1 }.map(\.id) == (1...10).map { UInt64($0) })

            // Each topic is followed and mirrored on its own shard's loop only.
            let (first, second) = (a.engine.shards[0], a.engine.shards[1])
            let held = (await first.heldIDs(x), await second.heldIDs(x), await second.heldIDs(y), await first.heldIDs(y))
            #expect(held.0 == (0, 11) && held.1 == (0, 0))
            #expect(held.2 == (0, 10) && held.3 == (0, 0))
            #expect(await first.subscriberCount(topic: x, channel: .events) == 1)
            #expect(await second.subscriberCount(topic: y, channel: .events) == 1)
            #expect(await first.subscriberCount(topic: y, channel: .events) == 0)
            // A publish on A goes through the topic's own engine; B's count A's subscriber.
            #expect(try await a.engine.publish(topic: y, channel: .events, data: "from A", event: nil)
                == PublishResult(id: 11, subscribers: 1))
            #expect(try await eventually { (try? await b.publish(x, .events, "counted"))?.subscribers == 1 })

            stream.cancel()
            #expect(try await eventually {
                let left = (await first.tables.registeredSubscribers(), await second.tables.registeredSubscribers())
                return left == (0, 0)
            })
            #expect(try await eventually { (try? await b.publish(y, .events, "gone"))?.subscribers == 0 })
            #expect(a.engine.counters.subscribers(.events) + a.engine.counters.subscribers(.state) == 0)
        }
    }

    /// A stream across shards one of which cannot reach its Redis is refused at once,
    /// and no shard follows its topics for it. The engine is not ready and says why.
    @Test func aShardThatCannotServeRefusesTheWholeStream() async throws {
        let redis = try await RedisServer.start()
        let unreachable = "redis://127.0.0.1:1"  // Nothing listens on port 1.
        let a = try RunningShardedEngine([redis.url, unreachable])
        try await stoppingAfterwards({
            await a.stop()
            await redis.stop()
        }) {
            #expect(try await eventually { a.engine.shards[0].isReady })
            #expect(!a.engine.isReady)
            #expect(a.engine.notReadyReason != nil)
            #expect(a.engine.metrics.first { $0.name == "sse_gateway_redis_up" }?.value == 0)
            let x = a.topic(inShard: 0, "x")
            let y = a.topic(inShard: 1, "y")
            await #expect(throws: SubscribeError.unavailable) {
                _ = try await a.engine.subscribe(topics: .tagged([x, y]), channel: .state, resumeAfter: nil)
            }
            let first = a.engine.shards[0]
            #expect(await first.arriving(x) == nil)
            #expect(await first.tables.registeredSubscribers() == 0)
            #expect(a.engine.counters.subscribers(.events) + a.engine.counters.subscribers(.state) == 0)
            // The topic of the shard that serves still takes a stream of its own.
            let alone = try await a.engine.subscribe(topic: x, channel: .state, lastEventID: nil)
            #expect(await first.subscriberCount(topic: x, channel: .state) == 1)
            alone.cancel()
        }
    }

    /// A stream across shards whose topic in one shard cannot be fenced (its syncs fail:
    /// its window key is not a stream) is refused after that fence's time, and
    /// registers nothing anywhere: the other shard, which had readied its topic, lets
    /// go of it.
    @Test func aFenceThatFailsInOneShardLeavesTheOtherShardHoldingNothing() async throws {
        let redis = try await RedisServer.start()
        let a = try RunningShardedEngine([redis.url, redis.url]) { $0.fenceTimeout = .milliseconds(100) }
        try await stoppingAfterwards({
            await a.stop()
            await redis.stop()
        }) {
            #expect(try await eventually { a.engine.isReady })
            let x = a.topic(inShard: 0, "x")
            let y = a.topic(inShard: 1, "y")
            for index in 1...3 { _ = try await a.engine.publish(topic: y, channel: .events, data: "e\(index)", event: nil) }
            let window = ClusterKeys(topic: y).events
            _ = try await redis.run(["DEL", window])
            _ = try await redis.run(["SET", window, "not a stream"])
            let started = ContinuousClock.now
            await #expect(throws: SubscribeError.unavailable) {
                _ = try await a.engine.subscribe(topics: .tagged([x, y]), channel: .events, resumeAfter: nil)
            }
            #expect(ContinuousClock.now - started < .seconds(5), "the failing fence was let wait for the catch-up")
            let (first, second) = (a.engine.shards[0], a.engine.shards[1])
            #expect(await first.arriving(x) == 0)
            #expect(await second.arriving(y) == 0)
            let registered = (await first.tables.registeredSubscribers(), await second.tables.registeredSubscribers())
            #expect(registered == (0, 0))
            #expect(a.engine.counters.subscribers(.events) == 0)
        }
    }
}

extension ClusterEngine {
    /// Subscribers arrived for `topic` and not yet registered or gone (tests).
    func arriving(_ topic: String) -> Int? { followed[topic]?.arriving }
}
