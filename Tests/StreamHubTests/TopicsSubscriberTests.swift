import Testing
@testable import StreamHub

/// One JSON data line of a several-topic frame, read back.
struct TopicValue: Equatable {
    let topic: String
    let id: UInt64
    let data: String
}

extension Subscription {
    /// Reads batches until `count` values (not gaps) arrived, with their marks.
    func receiveValues(_ count: Int) async throws -> [(TopicValue, FrameMark)] {
        var values: [(TopicValue, FrameMark)] = []
        while values.count < count, let batch = await nextMarkedBatch() {
            for (frame, mark) in zip(batch.frames, batch.marks) where mark.id > 0 {
                values.append((try decodeValue(frame), mark))
            }
        }
        return values
    }
}

/// The topic, id and value of one JSON frame (data without escapes in these tests).
func decodeValue(_ frame: [UInt8]) throws -> TopicValue {
    let events = try parse([frame])
    let json = try #require(events.first?.data)
    func field(_ name: String) -> String? {
        guard let start = json.range(of: "\"\(name)\":\"") else { return nil }
        let rest = json[start.upperBound...]
        return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
    }
    return TopicValue(topic: try #require(field("topic")), id: try #require(field("id").flatMap(UInt64.init)),
                      data: field("data") ?? "")
}

struct TopicsSubscriberTests {
    /// One subscriber in several topics: each publish reaches it once, as a JSON frame marked with its slot and id.
    @Test(arguments: HubExecutor.allCases) func oneSubscriberInEveryTopic(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        _ = try await hub.publish(topic: "b", channel: .events, data: "old")
        let sub = await hub.subscribe(topics: ["a", "b", "c"], channel: .events)
        #expect(sub.startPositions == [0, 1, 0])
        #expect(await hub.snapshot() == HubSnapshot(topics: 3, stateSubscribers: 0, eventsSubscribers: 1))
        #expect(hub.counters.subscribers(.events) == 1)
        #expect(try await hub.publish(topic: "c", channel: .events, data: "c1").subscribers == 1)
        _ = try await hub.publish(topic: "b", channel: .events, data: "b2")
        let values = try await sub.receiveValues(2)
        #expect(values.map(\.0) == [TopicValue(topic: "c", id: 1, data: "c1"), TopicValue(topic: "b", id: 2, data: "b2")])
        #expect(values.map(\.1) == [FrameMark(slot: 2, id: 1), FrameMark(slot: 1, id: 2)])
        #expect(await hub.subscriberCount(topic: "a", channel: .events) == 1)
    }

    /// A resume replays each topic after its own position; a position newer than the topic's last id is absent there.
    @Test(arguments: HubExecutor.allCases) func resumePerTopic(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        for index in 1...3 {
            _ = try await hub.publish(topic: "a", channel: .events, data: "a\(index)")
            _ = try await hub.publish(topic: "b", channel: .events, data: "b\(index)")
        }
        let sub = await hub.subscribe(topics: ["a", "b", "c"], channel: .events, resumeAfter: [1, 9, 0])
        #expect(sub.startPositions == [1, 3, 0])
        let values = try await sub.receiveValues(2).map(\.0)
        #expect(values == [TopicValue(topic: "a", id: 2, data: "a2"), TopicValue(topic: "a", id: 3, data: "a3")])
        #expect(sub.pendingCount == 0)
    }

    /// A topic whose position is older than its window gets a gap naming it, unmarked, then what the window holds.
    @Test(arguments: HubExecutor.allCases) func gapPerTopic(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing { $0.replayCount = 2 }, executor: executor.serialExecutor)
        for index in 1...5 { _ = try await hub.publish(topic: "a", channel: .events, data: "a\(index)") }
        _ = try await hub.publish(topic: "b", channel: .events, data: "b1")
        let sub = await hub.subscribe(topics: ["b", "a"], channel: .events, resumeAfter: [0, 1])
        let batch = try #require(await sub.nextMarkedBatch())
        #expect(batch.marks == [FrameMark(slot: 0, id: 1), FrameMark(slot: 1, id: 0), FrameMark(slot: 1, id: 4), FrameMark(slot: 1, id: 5)])
        #expect(batch.frames[1] == TopicFrameEncoder.gap(topic: "a", firstMissingID: 2))
        #expect(hub.counters.gapEvents == 1)
    }

    /// On events the queue limit counts every topic together: the stalled stream overflows and leaves all its topics.
    @Test(arguments: HubExecutor.allCases) func limitCountsAllTopicsAndOverflowLeavesAll(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing {
            $0.eventsQueueLimit = 4
            $0.replayCount = 0
        }, executor: executor.serialExecutor)
        let stalled = await hub.subscribe(topics: ["a", "b", "c"], channel: .events)
        for name in ["a", "b", "c", "a"] { _ = try await hub.publish(topic: name, channel: .events, data: "x") }
        #expect(stalled.finishReason == nil)
        _ = try await hub.publish(topic: "b", channel: .events, data: "x")
        #expect(stalled.finishReason == .overflow)
        #expect(hub.counters.slowSubscriberDisconnects == 1)
        #expect(await hub.snapshot() == HubSnapshot(topics: 0, stateSubscribers: 0, eventsSubscribers: 0))
        #expect(await hub.registeredSubscribers() == 0)
    }

    /// On state the current value of each topic comes first in parameter order; a slow reader keeps the newest per topic.
    @Test(arguments: HubExecutor.allCases) func stateNewestPerTopic(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        _ = try await hub.publish(topic: "b", channel: .state, data: "b1")
        _ = try await hub.publish(topic: "a", channel: .state, data: "a1")
        let sub = await hub.subscribe(topics: ["a", "x", "b"], channel: .state)
        #expect(sub.startPositions == [1, 0, 1])
        for index in 2...50 {
            _ = try await hub.publish(topic: "a", channel: .state, data: "a\(index)")
            _ = try await hub.publish(topic: "x", channel: .state, data: "x\(index)")
        }
        #expect(sub.finishReason == nil)
        let batch = try #require(await sub.nextMarkedBatch())
        #expect(try batch.frames.map(decodeValue) == [
            TopicValue(topic: "b", id: 1, data: "b1"), TopicValue(topic: "a", id: 50, data: "a50"),
            TopicValue(topic: "x", id: 49, data: "x50"),
        ])
    }

    /// Cancelling removes the subscriber from every topic at once; heartbeats reach it once.
    @Test(arguments: HubExecutor.allCases) func teardownFromEveryTopic(_ executor: HubExecutor) async throws {
        let clock = ManualClock()
        let hub = Hub(configuration: .testing(clock: clock), executor: executor.serialExecutor)
        let names = (1...32).map { "t\($0)" }
        let sub = await hub.subscribe(topics: .tagged(names), channel: .events)
        let single = await hub.subscribe(topic: "t1", channel: .events)
        clock.advance(by: .seconds(20))
        await hub.sendHeartbeats(idleFor: .seconds(15))
        #expect(sub.pendingCount == 1)
        #expect(await hub.snapshot().eventsSubscribers == 2)
        sub.cancel()
        single.cancel()
        #expect(hub.counters.subscribers(.events) == 0)
        #expect(await hub.snapshot() == HubSnapshot(topics: 0, stateSubscribers: 0, eventsSubscribers: 0))
    }

    /// Subscribing and publishing concurrently to several topics: every value of every topic exactly once, in order.
    @Test(arguments: HubExecutor.allCases) func concurrentPublishersExactlyOnce(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing { $0.eventsQueueLimit = 10_000 }, executor: executor.serialExecutor)
        let names = ["a", "b", "c", "d"]
        let perTopic = 200
        let sub = await hub.subscribe(topics: .tagged(names), channel: .events)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for name in names {
                group.addTask {
                    for index in 1...perTopic { _ = try await hub.publish(topic: name, channel: .events, data: "\(index)") }
                }
            }
            try await group.waitForAll()
        }
        let values = try await sub.receiveValues(names.count * perTopic).map(\.0)
        for name in names {
            #expect(values.filter { $0.topic == name }.map(\.id) == (1...UInt64(perTopic)).map { $0 })
        }
    }

    /// The JSON frame is encoded once per publish and shared by every several-topic subscriber.
    @Test func frameSharedBySubscribers() async throws {
        let hub = Hub(configuration: .testing())
        let first = await hub.subscribe(topics: ["a", "b"], channel: .events)
        let second = await hub.subscribe(topics: ["b"], channel: .events)
        _ = try await hub.publish(topic: "b", channel: .events, data: "v", event: "n")
        let one = try #require(await first.nextMarkedBatch())
        let two = try #require(await second.nextMarkedBatch())
        #expect(one.frames == two.frames)
        #expect(one.frames[0] == TopicFrameEncoder.event(topic: "b", id: 1, event: "n", data: "v"))
        one.frames[0].withUnsafeBufferPointer { a in
            two.frames[0].withUnsafeBufferPointer { b in #expect(a.baseAddress == b.baseAddress) }
        }
    }

    /// After shutdown a several-topic subscription is born finished; shutdown finishes live ones.
    @Test func shutdown() async {
        let hub = Hub(configuration: .testing())
        let live = await hub.subscribe(topics: ["a", "b"], channel: .state)
        await hub.shutdown()
        #expect(live.finishReason == .shutdown)
        let late = await hub.subscribe(topics: ["a"], channel: .events)
        #expect(late.finishReason == .shutdown)
        #expect(hub.counters.subscribers(.state) == 0)
    }
}
