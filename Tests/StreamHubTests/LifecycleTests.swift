import Testing
@testable import StreamHub

struct LifecycleTests {
    /// 10,000 subscribe/cancel cycles leave no subscriber and no topic behind.
    @Test(arguments: HubExecutor.allCases) func subscribeCancelCyclesLeaveNothing(_ executor: HubExecutor) async {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        for index in 0..<10_000 {
            let sub = await hub.subscribe(topic: "t\(index % 7)", channel: index.isMultiple(of: 2) ? .state : .events)
            sub.cancel()
            #expect(hub.counters.subscribers(sub.channel) == 0)
        }
        #expect(await hub.snapshot() == HubSnapshot(topics: 0, stateSubscribers: 0, eventsSubscribers: 0))
    }

    /// A dropped Subscription leaves the hub as if cancelled.
    @Test(arguments: HubExecutor.allCases) func droppedSubscriptionLeaves(_ executor: HubExecutor) async {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let reasons = Recorder<FinishReason>()
        for _ in 0..<100 {
            let sub = await hub.subscribe(topic: "t", channel: .events)
            sub.onFinish { reasons.record($0) }
        }
        #expect(reasons.all == [FinishReason](repeating: .cancelled, count: 100))
        #expect(hub.counters.subscribers(.events) == 0)
        #expect(await hub.snapshot().topics == 0)
    }

    /// The removal hop after a cancel completes on its own, without another hub call.
    @Test(arguments: HubExecutor.allCases) func removalHopCompletesPromptly(_ executor: HubExecutor) async {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .events)
        #expect(await hub.registeredSubscribers() == 1)
        sub.cancel()
        var yields = 0
        while await hub.registeredSubscribers() > 0, yields < 10_000 {
            await Task.yield()
            yields += 1
        }
        #expect(await hub.registeredSubscribers() == 0)
    }

    /// Cancelling the consuming task ends its loop: nextBatch returns nil, reason .cancelled.
    @Test(arguments: HubExecutor.allCases) func cancellingConsumerTaskEndsLoop(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .events)
        let consumer = Task {
            var batches = 0
            while await sub.nextBatch() != nil { batches += 1 }
            return batches
        }
        _ = try await hub.publish(topic: "t", channel: .events, data: "x")
        consumer.cancel()
        #expect(await consumer.value <= 1)
        #expect(sub.finishReason == .cancelled)
        #expect(hub.counters.subscribers(.events) == 0)
        #expect(try await hub.publish(topic: "t", channel: .events, data: "y").subscribers == 0)
    }

    /// A task cancelled before it calls nextBatch gets nil even with frames pending.
    @Test(arguments: HubExecutor.allCases) func cancelledBeforeSuspension(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .events)
        _ = try await hub.publish(topic: "t", channel: .events, data: "x")
        let result = await Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await sub.nextBatch()
        }.value
        #expect(result == nil)
        #expect(sub.finishReason == .cancelled)
    }

    /// cancel() is idempotent and wakes a parked consumer; each handler runs exactly once.
    @Test(arguments: HubExecutor.allCases) func cancelIsIdempotentHandlersOnce(_ executor: HubExecutor) async {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .state)
        let reasons = Recorder<String>()
        sub.onFinish { reasons.record("a:\($0)") }
        sub.onFinish { reasons.record("b:\($0)") }
        let consumer = Task { await sub.nextBatch() }
        sub.cancel()
        sub.cancel()
        #expect(await consumer.value == nil)
        sub.onFinish { reasons.record("late:\($0)") }
        #expect(reasons.all == ["a:cancelled", "b:cancelled", "late:cancelled"])
        #expect(hub.counters.subscribers(.state) == 0)
    }

    /// shutdown finishes every subscriber (nil, .shutdown); later calls see a shut hub.
    @Test(arguments: HubExecutor.allCases) func shutdownFinishesEveryone(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let reasons = Recorder<FinishReason>()
        var subs: [Subscription] = []
        for index in 0..<6 {
            let sub = await hub.subscribe(topic: "t\(index % 2)", channel: index < 3 ? .state : .events)
            sub.onFinish { reasons.record($0) }
            subs.append(sub)
        }
        _ = try await hub.publish(topic: "t0", channel: .events, data: "pending")
        let parked = subs[0]
        let consumer = Task { await parked.nextBatch() }
        await hub.shutdown()
        await hub.shutdown()
        #expect(await consumer.value == nil)
        for sub in subs {
            #expect(await sub.nextBatch() == nil)
            #expect(sub.finishReason == .shutdown)
        }
        #expect(reasons.all == [FinishReason](repeating: .shutdown, count: 6))
        #expect(hub.counters.subscribers(.state) == 0 && hub.counters.subscribers(.events) == 0)
        #expect(await hub.snapshot() == HubSnapshot(topics: 0, stateSubscribers: 0, eventsSubscribers: 0))

        let late = await hub.subscribe(topic: "t0", channel: .events)
        #expect(late.finishReason == .shutdown)
        #expect(await late.nextBatch() == nil)
        #expect(hub.counters.subscribers(.events) == 0)
        await #expect(throws: PublishError.shutdown) {
            try await hub.publish(topic: "t0", channel: .state, data: "x")
        }
    }

    /// A hub dropped without shutdown still finishes its subscribers with .shutdown.
    @Test(arguments: HubExecutor.allCases) func droppedHubFinishesSubscribers(_ executor: HubExecutor) async {
        var hub: Hub? = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub!.subscribe(topic: "t", channel: .events)
        hub = nil
        #expect(await sub.nextBatch() == nil)
        #expect(sub.finishReason == .shutdown)
    }

    /// sweep forgets only topics with no subscribers, no state value and an aged-out window.
    @Test(arguments: HubExecutor.allCases) func sweepForgetsOnlyEmptyTopics(_ executor: HubExecutor) async throws {
        let clock = ManualClock()
        let hub = Hub(configuration: .testing(clock: clock) { $0.replayMaxAge = .seconds(60) }, executor: executor.serialExecutor)
        _ = try await hub.publish(topic: "state", channel: .state, data: "kept")
        _ = try await hub.publish(topic: "events", channel: .events, data: "aging")
        let sub = await hub.subscribe(topic: "watched", channel: .events)
        await hub.sweep()
        #expect(await hub.snapshot().topics == 3)
        clock.advance(by: .seconds(61))
        await hub.sweep()
        #expect(await hub.snapshot().topics == 2)
        sub.cancel()
        #expect(await hub.snapshot().topics == 1)  // Removed on unsubscribe.
        // A forgotten topic used again goes on from its last id; a resume from before it
        // gets a gap for the event that left with the topic, then the new one.
        #expect(try await hub.publish(topic: "events", channel: .events, data: "new").id == 2)
        let resumed = await hub.subscribe(topic: "events", channel: .events, lastEventID: 0)
        let events = try parse(await resumed.takePending())
        #expect(events == [SSEEvent(id: nil, event: "gap", data: "1"), SSEEvent(id: "2", event: nil, data: "new")])
        // Past the number of forgotten topics remembered, a topic starts again at 1.
        let small = Hub(configuration: .testing(clock: clock) {
            $0.replayMaxAge = .seconds(60)
            $0.forgottenTopicsRemembered = 1
        }, executor: executor.serialExecutor)
        for (index, topic) in ["first", "second"].enumerated() {  // Forgotten one after the other: "first" is let go.
            _ = try await small.publish(topic: topic, channel: .events, data: "x")
            clock.advance(by: .seconds(61))
            await small.sweep()
            #expect(small.counters.forgottenTopicsLetGo == UInt64(index), "a record let go is counted, once")
        }
        #expect(hub.counters.forgottenTopicsLetGo == 0)
        #expect(try await small.publish(topic: "second", channel: .events, data: "y").id == 2)
        #expect(try await small.publish(topic: "first", channel: .events, data: "y").id == 1)
    }

    /// The sweep lets expired events go on a topic it keeps (for its state value or a subscriber), not only on topics it forgets (found by the reliability soak: a topic nobody published to any more kept its window for ever).
    @Test(arguments: HubExecutor.allCases) func sweepPrunesTheWindowOfTopicsItKeeps(_ executor: HubExecutor) async throws {
        let clock = ManualClock()
        let hub = Hub(configuration: .testing(clock: clock) { $0.replayMaxAge = .seconds(60) }, executor: executor.serialExecutor)
        for topic in ["with-state", "watched"] {
            for index in 0..<5 { _ = try await hub.publish(topic: topic, channel: .events, data: "\(index)") }
        }
        _ = try await hub.publish(topic: "with-state", channel: .state, data: "kept")
        let sub = await hub.subscribe(topic: "watched", channel: .state)
        clock.advance(by: .seconds(61))
        await hub.sweep()
        #expect(await hub.snapshot().topics == 2)
        #expect(await hub.heldEvents(topic: "with-state") == 0)
        #expect(await hub.heldEvents(topic: "watched") == 0)
        // The ids go on: the topics were kept.
        #expect(try await hub.publish(topic: "with-state", channel: .events, data: "next").id == 6)
        sub.cancel()
    }

    /// Unsubscribing keeps a topic whose window still holds events.
    @Test(arguments: HubExecutor.allCases) func unsubscribeKeepsTopicWithWindow(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .events)
        _ = try await hub.publish(topic: "t", channel: .events, data: "x")
        sub.cancel()
        #expect(await hub.snapshot() == HubSnapshot(topics: 1, stateSubscribers: 0, eventsSubscribers: 0))
        let resumed = await hub.subscribe(topic: "t", channel: .events, lastEventID: 0)
        #expect(try parse(await resumed.takePending()).map(\.data) == ["x"])
    }
}
