import HTTPCore
import StreamHub
import Testing

/// A publish handler on an event loop publishes to a hub on a loop's executor (its own
/// loop's, or another loop's, taking that executor's gate) without a hop; off the loops,
/// or to a hub on another kind of executor, it must take the hop (`publishInPlace` gives nil).
struct PublishInPlaceTests {
    @Test func onTheLoopThreadTheHubPublishesInPlace() async throws {
        let loop = EventLoop.shared
        let hub = Hub(executor: loop.actorExecutor)
        let subscription = await hub.subscribe(topic: "t", channel: .events, lastEventID: nil)
        defer { subscription.cancel() }
        let inPlace = await withTaskExecutorPreference(loop) {
            hub.publishInPlace(topic: "t", channel: .events, data: "a", event: nil)
        }
        let result = try #require(try inPlace?.get())
        #expect(result.id == 1 && result.subscribers == 1)
        #expect(await subscription.nextBatch() == [SSEEncoder.event(id: 1, event: nil, data: "a")])
        // The next publish through the actor continues the same ids.
        #expect(try await hub.publish(topic: "t", channel: .events, data: "b").id == 2)
    }

    /// From another loop's thread: in place too, in the same order of ids as publishes
    /// through the actor, while the hub's own loop keeps running its jobs.
    @Test func fromAnotherLoopTheHubPublishesInPlace() async throws {
        let loops = EventLoop.loops(2)
        let hub = Hub(executor: loops[0].actorExecutor)
        let subscription = await hub.subscribe(topic: "t", channel: .events, lastEventID: nil)
        defer { subscription.cancel() }
        let ids = await withTaskExecutorPreference(loops[1]) {
            var ids: [UInt64?] = []
            for index in 0..<100 {
                #expect(loops[1].isLoopThread)
                ids.append(try? hub.publishInPlace(topic: "t", channel: .events, data: "\(index)", event: nil)?.get().id)
            }
            return ids
        }
        #expect(ids == (1...100).map { UInt64($0) })
        #expect(try await hub.publish(topic: "t", channel: .events, data: "last").id == 101)
        var frames: [[UInt8]] = []
        while frames.count < 101, let batch = await subscription.nextBatch() { frames += batch }
        #expect(frames == (0..<100).map { SSEEncoder.event(id: UInt64($0 + 1), event: nil, data: "\($0)") }
            + [SSEEncoder.event(id: 101, event: nil, data: "last")])
    }

    @Test func offTheLoopThreadOrOnAnotherExecutorItDoesNot() async {
        let onLoop = Hub(executor: EventLoop.shared.actorExecutor)
        #expect(onLoop.publishInPlace(topic: "t", channel: .events, data: "a", event: nil) == nil)
        let onQueue = Hub()
        let fromLoop = await withTaskExecutorPreference(EventLoop.shared) {
            onQueue.publishInPlace(topic: "t", channel: .events, data: "a", event: nil) == nil
        }
        #expect(fromLoop)
        #expect(await onLoop.snapshot().topics == 0)
    }
}
