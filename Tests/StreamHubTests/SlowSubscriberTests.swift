import Testing
@testable import StreamHub

struct SlowSubscriberTests {
    /// A subscriber that never reads is finished at its limit with .overflow (handler
    /// called, counter incremented) while the publisher and another subscriber go on.
    @Test(arguments: HubExecutor.allCases) func overflowDisconnectsOnlyTheSlowOne(_ executor: HubExecutor) async throws {
        let limit = 16
        let hub = Hub(configuration: .testing { $0.eventsQueueLimit = limit }, executor: executor.serialExecutor)
        let reasons = Recorder<FinishReason>()
        let stalled = await hub.subscribe(topic: "t", channel: .events)
        stalled.onFinish { reasons.record($0) }
        let reader = await hub.subscribe(topic: "t", channel: .events)
        var received: [UInt64] = []
        for index in 1...100 {
            let result = try await hub.publish(topic: "t", channel: .events, data: "\(index)")
            #expect(result.subscribers == (index <= limit ? 2 : 1))
            received += try await reader.receive(1).compactMap(\.number)
        }
        #expect(received == (1...100).map { UInt64($0) })
        #expect(reasons.all == [.overflow])
        #expect(stalled.finishReason == .overflow)
        #expect(await stalled.nextBatch() == nil)  // Pending frames were dropped.
        #expect(hub.counters.slowSubscriberDisconnects == 1)
        #expect(hub.counters.subscribers(.events) == 1)
        #expect(await hub.snapshot().eventsSubscribers == 1)
    }

    /// An overflowed subscriber that was all its topic held takes the topic with it.
    @Test(arguments: HubExecutor.allCases) func overflowForgetsEmptyTopic(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing {
            $0.eventsQueueLimit = 2
            $0.replayCount = 0
        }, executor: executor.serialExecutor)
        let stalled = await hub.subscribe(topic: "t", channel: .events)
        for _ in 1...3 { _ = try await hub.publish(topic: "t", channel: .events, data: "x") }
        #expect(stalled.finishReason == .overflow)
        #expect(await hub.snapshot() == HubSnapshot(topics: 0, stateSubscribers: 0, eventsSubscribers: 0))
    }

    /// A state subscriber never overflows: it holds only the newest value.
    @Test(arguments: HubExecutor.allCases) func stateNeverOverflows(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing { $0.eventsQueueLimit = 1 }, executor: executor.serialExecutor)
        let stalled = await hub.subscribe(topic: "t", channel: .state)
        for index in 1...50 { _ = try await hub.publish(topic: "t", channel: .state, data: "\(index)") }
        #expect(stalled.finishReason == nil)
        #expect(try parse(await stalled.takePending()).map(\.data) == ["50"])
    }

    /// Heartbeats go only to subscribers with an empty queue that got nothing for idleFor.
    @Test(arguments: HubExecutor.allCases) func heartbeatsOnlyToIdle(_ executor: HubExecutor) async throws {
        let clock = ManualClock()
        let hub = Hub(configuration: .testing(clock: clock), executor: executor.serialExecutor)
        let idle = await hub.subscribe(topic: "a", channel: .events)
        let backlogged = await hub.subscribe(topic: "b", channel: .events)
        let recent = await hub.subscribe(topic: "c", channel: .state)
        clock.advance(by: .seconds(10))
        _ = try await hub.publish(topic: "b", channel: .events, data: "waiting")
        _ = try await hub.publish(topic: "c", channel: .state, data: "read")
        _ = await recent.takePending()
        clock.advance(by: .seconds(5))

        await hub.sendHeartbeats(idleFor: .seconds(15))
        #expect(await idle.takePending() == [SSEEncoder.heartbeat])
        #expect(try parse(await backlogged.takePending()).map(\.data) == ["waiting"])
        #expect(recent.pendingCount == 0)

        await hub.sendHeartbeats(idleFor: .seconds(15))  // idle just got one.
        #expect(idle.pendingCount == 0)
        clock.advance(by: .seconds(10))
        await hub.sendHeartbeats(idleFor: .seconds(15))
        #expect(idle.pendingCount == 0)
        #expect(await recent.takePending() == [SSEEncoder.heartbeat])
        #expect(hub.counters.framesDelivered(.events) == 1)  // Heartbeats are not events.
    }

    /// A parked consumer is woken by a heartbeat.
    @Test(arguments: HubExecutor.allCases) func heartbeatWakesParkedConsumer(_ executor: HubExecutor) async {
        let clock = ManualClock()
        let hub = Hub(configuration: .testing(clock: clock), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .events)
        let consumer = Task { await sub.nextBatch() }
        clock.advance(by: .seconds(1))
        await hub.sendHeartbeats(idleFor: .seconds(1))
        #expect(await consumer.value == [SSEEncoder.heartbeat])
    }
}
