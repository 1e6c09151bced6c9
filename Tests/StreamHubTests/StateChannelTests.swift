import Testing
@testable import StreamHub

struct StateChannelTests {
    /// A late subscriber first gets the topic's current value.
    @Test(arguments: HubExecutor.allCases) func lateSubscriberGetsCurrentValue(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        _ = try await hub.publish(topic: "t", channel: .state, data: "v1")
        _ = try await hub.publish(topic: "t", channel: .state, data: "v2", event: "price")
        let sub = await hub.subscribe(topic: "t", channel: .state)
        #expect(try await sub.receive(1) == [SSEEvent(id: "2", event: "price", data: "v2")])
    }

    /// With no value yet, a subscriber gets nothing until the first publish.
    @Test(arguments: HubExecutor.allCases) func noValueNothingFirst(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .state)
        #expect(sub.pendingCount == 0)
        _ = try await hub.publish(topic: "t", channel: .state, data: "first")
        #expect(try await sub.receive(1) == [SSEEvent(id: "1", event: nil, data: "first")])
    }

    /// A value updated before delivery is replaced: the reader gets only the newest.
    @Test(arguments: HubExecutor.allCases) func updateBeforeDeliveryGivesNewestOnly(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        _ = try await hub.publish(topic: "t", channel: .state, data: "old")
        let sub = await hub.subscribe(topic: "t", channel: .state)
        _ = try await hub.publish(topic: "t", channel: .state, data: "new")
        let batch = try #require(await sub.nextBatch())
        #expect(try parse(batch) == [SSEEvent(id: "2", event: nil, data: "new")])
    }

    /// A paused reader resuming after 1,000 publishes gets exactly one frame: the latest.
    @Test(arguments: HubExecutor.allCases) func pausedReaderLandsOnLatest(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .state)
        for index in 1...1000 {
            let result = try await hub.publish(topic: "t", channel: .state, data: "v\(index)")
            #expect(result == PublishResult(id: UInt64(index), subscribers: 1))
        }
        let batch = try #require(await sub.nextBatch())
        #expect(batch.count == 1)
        #expect(try parse(batch) == [SSEEvent(id: "1000", event: nil, data: "v1000")])
        #expect(sub.pendingCount == 0)
    }

    /// A reader that keeps up sees values in increasing id order, never an older after a newer.
    @Test(arguments: HubExecutor.allCases) func neverOlderAfterNewer(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .state)
        let reader = Task {
            var last: UInt64 = 0
            var parser = SSEParser()
            while last < 500, let batch = await sub.nextBatch() {
                for frame in batch {
                    for event in try parser.feed(frame) {
                        let id = try #require(event.number)
                        #expect(id > last)
                        last = id
                    }
                }
            }
            return last
        }
        for index in 1...500 {
            _ = try await hub.publish(topic: "t", channel: .state, data: "\(index)")
        }
        #expect(try await reader.value == 500)
    }

    /// `/state` ignores Last-Event-ID: the current value is always the first event.
    @Test(arguments: HubExecutor.allCases) func ignoresLastEventID(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        for index in 1...3 { _ = try await hub.publish(topic: "t", channel: .state, data: "\(index)") }
        for lastEventID: UInt64 in [0, 1, 3, 99] {
            let sub = await hub.subscribe(topic: "t", channel: .state, lastEventID: lastEventID)
            #expect(try await sub.receive(1) == [SSEEvent(id: "3", event: nil, data: "3")])
        }
    }
}
