import Testing
@testable import StreamHub

struct EventsChannelTests {
    /// A late subscriber gets nothing published before it subscribed.
    @Test(arguments: HubExecutor.allCases) func lateSubscriberGetsNothingOld(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        for index in 1...5 { _ = try await hub.publish(topic: "t", channel: .events, data: "old\(index)") }
        let sub = await hub.subscribe(topic: "t", channel: .events)
        #expect(sub.pendingCount == 0)
        _ = try await hub.publish(topic: "t", channel: .events, data: "new")
        #expect(try await sub.receive(1) == [SSEEvent(id: "6", event: nil, data: "new")])
    }

    /// A reader that paused gets every pending event in one batch, in order.
    @Test(arguments: HubExecutor.allCases) func batchHoldsAllPendingInOrder(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .events)
        for index in 1...10 { _ = try await hub.publish(topic: "t", channel: .events, data: "\(index)") }
        let batch = try #require(await sub.nextBatch())
        #expect(batch.count == 10)
        #expect(try parse(batch).map(\.data) == (1...10).map { "\($0)" })
    }

    /// 8 concurrent publishers × 250 events, 10 subscribers: each subscriber gets every
    /// event exactly once, each publisher's events in its order.
    @Test(arguments: HubExecutor.allCases) func concurrentPublishersExactlyOnceInOrder(_ executor: HubExecutor) async throws {
        // Sized to interleave thoroughly without flooding the test process's two pool
        // threads for seconds (which starved every socket test with a deadline).
        let publishers = 8, perPublisher = 250, subscriberCount = 10
        let total = publishers * perPublisher
        // The limit covers everything: this test is about order, not slow readers.
        let hub = Hub(configuration: .testing { $0.eventsQueueLimit = total }, executor: executor.serialExecutor)
        var subs: [Subscription] = []
        for _ in 0..<subscriberCount { subs.append(await hub.subscribe(topic: "chat", channel: .events)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for sub in subs {
                group.addTask {
                    let events = try await sub.receive(total)
                    #expect(events.count == total)
                    // Checked in plain code, one expectation per subscriber: 160,000
                    // `#expect`s would hog the shared test process's threads for seconds.
                    var next = [Int](repeating: 0, count: publishers)
                    var lastID: UInt64 = 0
                    var firstProblem: String?
                    for event in events where firstProblem == nil {
                        let parts = event.data.split(separator: "/").compactMap { Int($0) }
                        if parts.count != 2 || !next.indices.contains(parts[0]) {
                            firstProblem = "unexpected data \(event.data)"
                        } else if parts[1] != next[parts[0]] {
                            firstProblem = "publisher \(parts[0]) out of order at \(parts[1])"
                        } else if event.number != lastID + 1 {
                            firstProblem = "id \(event.id ?? "none") after \(lastID)"
                        } else {
                            next[parts[0]] = parts[1] + 1
                            lastID += 1
                        }
                    }
                    #expect(firstProblem == nil)
                    #expect(next == [Int](repeating: perPublisher, count: publishers))
                }
            }
            for publisher in 0..<publishers {
                group.addTask {
                    for seq in 0..<perPublisher {
                        let result = try await hub.publish(topic: "chat", channel: .events, data: "\(publisher)/\(seq)")
                        #expect(result.subscribers == subscriberCount)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(hub.counters.publishes(.events) == UInt64(total))
        #expect(hub.counters.framesQueued(.events) == UInt64(total * subscriberCount))
        #expect(hub.counters.framesDelivered(.events) == UInt64(total * subscriberCount))
    }

    /// Two subscribers of the same channel each see every value (no splitting between readers).
    @Test(arguments: HubExecutor.allCases, Channel.allCases)
    func fanOut(_ executor: HubExecutor, channel: Channel) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let first = await hub.subscribe(topic: "t", channel: channel)
        let second = await hub.subscribe(topic: "t", channel: channel)
        var expected: [SSEEvent] = []
        for index in 1...3 {
            let result = try await hub.publish(topic: "t", channel: channel, data: "v\(index)")
            #expect(result.subscribers == 2)
            expected.append(SSEEvent(id: "\(index)", event: nil, data: "v\(index)"))
            #expect(try await first.receive(1) == [expected.last!])
        }
        let rest = try await second.receive(channel == .events ? 3 : 1)
        #expect(rest == (channel == .events ? expected : [expected.last!]))
    }

    /// Topics and channels are independent: ids start at 1 on each, subscribers are separate.
    @Test(arguments: HubExecutor.allCases) func topicsAndChannelsAreIndependent(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let a = await hub.subscribe(topic: "a", channel: .events)
        #expect(try await hub.publish(topic: "a", channel: .events, data: "x").id == 1)
        #expect(try await hub.publish(topic: "a", channel: .state, data: "x") == PublishResult(id: 1, subscribers: 0))
        #expect(try await hub.publish(topic: "b", channel: .events, data: "x") == PublishResult(id: 1, subscribers: 0))
        #expect(try await hub.publish(topic: "a", channel: .events, data: "y") == PublishResult(id: 2, subscribers: 1))
        #expect(try await a.receive(2).map(\.data) == ["x", "y"])
    }

    /// One encoded frame is shared (not copied) by every subscriber and the window.
    @Test(arguments: HubExecutor.allCases) func frameIsEncodedOnce(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let first = await hub.subscribe(topic: "t", channel: .events)
        let second = await hub.subscribe(topic: "t", channel: .events)
        _ = try await hub.publish(topic: "t", channel: .events, data: String(repeating: "x", count: 4096))
        let a = try #require(await first.nextBatch()?.first)
        let b = try #require(await second.nextBatch()?.first)
        let sameBuffer = a.withUnsafeBufferPointer { pa in b.withUnsafeBufferPointer { pb in pa.baseAddress == pb.baseAddress } }
        #expect(sameBuffer)
    }
}
