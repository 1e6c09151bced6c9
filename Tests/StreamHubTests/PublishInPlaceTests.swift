import HTTPCore
@testable import StreamHub
import Testing

/// `Hub.publish` called on the event loop publishes to a hub on the loop's executor
/// without a hop; anywhere else it must take the hop (`publishInPlace`, the first
/// thing `publish` tries, gives nil).
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
