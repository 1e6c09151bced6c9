import HTTPCore
@testable import StreamHub
import Testing

/// `Hub.publish` called on the event loop publishes to a hub on the loop's executor
/// without a hop; anywhere else it must take the hop (`publishAtOnce`, the first
/// thing `publish` tries, gives nil).
struct PublishInPlaceTests {
    @Test func onTheLoopThreadTheHubPublishesInPlace() async throws {
        let loop = EventLoop.shared
        let hub = Hub(executor: loop.actorExecutor)
        let subscription = await hub.subscribe(topic: "t", channel: .events, lastEventID: nil)
        defer { subscription.cancel() }
        let inPlace = await withTaskExecutorPreference(loop) {
            hub.publishAtOnce(topic: "t", channel: .events, data: "a", event: nil)
        }
        let result = try #require(try inPlace?.get())
        #expect(result.id == 1 && result.subscribers == 1)
        #expect(await subscription.nextBatch() == [SSEEncoder.event(id: 1, event: nil, data: "a")])
        // The next publish through the actor continues the same ids.
        #expect(try await hub.publish(topic: "t", channel: .events, data: "b").id == 2)
    }

    @Test func offTheLoopThreadOrOnAnotherExecutorItDoesNot() async {
        let onLoop = Hub(executor: EventLoop.shared.actorExecutor)
        #expect(onLoop.publishAtOnce(topic: "t", channel: .events, data: "a", event: nil) == nil)
        let onQueue = Hub()
        let fromLoop = await withTaskExecutorPreference(EventLoop.shared) {
            onQueue.publishAtOnce(topic: "t", channel: .events, data: "a", event: nil) == nil
        }
        #expect(fromLoop)
        #expect(await onLoop.snapshot().topics == 0)
    }

    @Test func aShardedEnginePublishesAtOnceOnlyOnTheTopicsLoop() async throws {
        let loops = EventLoop.loops(2)
        let engine = ShardedHub(configuration: .init(), executors: loops.map(\.actorExecutor))
        let names = ShardedHubTests.names(engine, perShard: 1)
        let subscription = try await engine.subscribe(topics: .single(names.second[0]), channel: .events,
                                                  resumeAfter: nil)
        defer { subscription.cancel() }
        // On loop 0: its own topic at once, the other loop's not (and nothing published there).
        let onLoop0 = await withTaskExecutorPreference(loops[0]) {
            (engine.publishAtOnce(topic: names.first[0], channel: .events, data: "a", event: nil),
             engine.publishAtOnce(topic: names.second[0], channel: .events, data: "b", event: nil) == nil)
        }
        #expect(try #require(try onLoop0.0?.get()).id == 1)
        #expect(onLoop0.1)
        // On loop 1, the second topic's first id, to its subscriber.
        let onLoop1 = await withTaskExecutorPreference(loops[1]) {
            engine.publishAtOnce(topic: names.second[0], channel: .events, data: "c", event: nil)
        }
        let result = try #require(try onLoop1?.get())
        #expect(result.id == 1 && result.subscribers == 1)
        #expect(await subscription.nextBatch() == [SSEEncoder.event(id: 1, event: nil, data: "c")])
    }
}
