import Testing
@testable import StreamHub

struct ReplayTests {
    private func hub(_ executor: HubExecutor, count: Int = 256, maxAge: Duration = .seconds(300),
                     clock: ManualClock = ManualClock()) -> Hub {
        Hub(configuration: .testing(clock: clock) {
            $0.replayCount = count
            $0.replayMaxAge = maxAge
        }, executor: executor.serialExecutor)
    }

    private func publish(_ hub: Hub, _ range: ClosedRange<Int>, topic: String = "t") async throws {
        for index in range { _ = try await hub.publish(topic: topic, channel: .events, data: "e\(index)") }
    }

    /// Resuming after id N yields exactly N+1 … last, then live events.
    @Test(arguments: HubExecutor.allCases) func resumeAfterN(_ executor: HubExecutor) async throws {
        let hub = hub(executor)
        try await publish(hub, 1...10)
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 7)
        #expect(try parse(await sub.takePending()).map(\.number) == [8, 9, 10])
        try await publish(hub, 11...11)
        #expect(try await sub.receive(1).map(\.number) == [11])
    }

    /// Resuming older than the window yields gap(N+1), then the whole window; a window of
    /// one event (`--replay-count 1`) too.
    @Test(arguments: HubExecutor.allCases, [(count: 5, published: 10, resumeAfter: UInt64(2), held: [UInt64(6), 7, 8, 9, 10]),
                                            (count: 1, published: 3, resumeAfter: UInt64(1), held: [UInt64(3)])])
    func resumeOlderThanWindow(_ executor: HubExecutor, _ window: (count: Int, published: Int, resumeAfter: UInt64, held: [UInt64]))
        async throws {
        let hub = hub(executor, count: window.count)
        try await publish(hub, 1...window.published)
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: window.resumeAfter)
        let events = try parse(await sub.takePending())
        #expect(events.first == SSEEvent(id: nil, event: "gap", data: "\(window.resumeAfter + 1)"))
        #expect(events.dropFirst().map(\.number) == window.held)
    }

    /// A window longer than the queue limit still resumes: the replay is delivered, then live events.
    @Test(arguments: HubExecutor.allCases) func replayLongerThanTheQueueLimitResumes(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(clock: ManualClock()) {
            $0.replayCount = 50
            $0.eventsQueueLimit = 8
        }, executor: executor.serialExecutor)
        try await publish(hub, 1...60)
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 0)
        let events = try parse(await sub.takePending())
        #expect(events.first?.event == "gap")
        #expect(events.dropFirst().map(\.number) == Array(11...60))
        #expect(sub.finishReason == nil)
        try await publish(hub, 61...61)
        #expect(try await sub.receive(1).map(\.number) == [61])
    }

    /// Resuming right before the window's first id is no gap.
    @Test(arguments: HubExecutor.allCases) func resumeAtWindowEdgeHasNoGap(_ executor: HubExecutor) async throws {
        let hub = hub(executor, count: 5)
        try await publish(hub, 1...10)
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 5)
        #expect(try parse(await sub.takePending()).map(\.number) == [6, 7, 8, 9, 10])
    }

    /// A Last-Event-ID equal to the last id replays nothing; newer is treated as absent.
    @Test(arguments: HubExecutor.allCases) func upToDateOrNewerReplaysNothing(_ executor: HubExecutor) async throws {
        let hub = hub(executor)
        try await publish(hub, 1...3)
        for lastEventID: UInt64 in [3, 4, 1_000_000] {
            let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: lastEventID)
            #expect(sub.pendingCount == 0)
        }
        let unknownTopic = await hub.subscribe(topic: "new", channel: .events, lastEventID: 5)
        #expect(unknownTopic.pendingCount == 0)
    }

    /// Last-Event-ID 0 replays from the first event.
    @Test(arguments: HubExecutor.allCases) func resumeFromZero(_ executor: HubExecutor) async throws {
        let hub = hub(executor)
        try await publish(hub, 1...3)
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 0)
        #expect(try parse(await sub.takePending()).map(\.number) == [1, 2, 3])
    }

    /// An event aged exactly replayMaxAge is still replayed; 1 ns later it is gone (gap).
    @Test(arguments: HubExecutor.allCases) func maxAgeBoundaryWithControlledClock(_ executor: HubExecutor) async throws {
        let clock = ManualClock()
        let hub = hub(executor, maxAge: .seconds(60), clock: clock)
        try await publish(hub, 1...1)
        clock.advance(by: .seconds(30))
        try await publish(hub, 2...2)
        clock.advance(by: .seconds(30))  // Event 1 is exactly 60 s old.
        let atBoundary = await hub.subscribe(topic: "t", channel: .events, lastEventID: 0)
        #expect(try parse(await atBoundary.takePending()).map(\.number) == [1, 2])
        clock.advance(by: .nanoseconds(1))
        let past = await hub.subscribe(topic: "t", channel: .events, lastEventID: 0)
        let events = try parse(await past.takePending())
        #expect(events == [SSEEvent(id: nil, event: "gap", data: "1"), SSEEvent(id: "2", event: nil, data: "e2")])
    }

    /// Ids a cluster skipped after a held event (a failover lost them) stay a hole in the
    /// window: a resume from before everything gets the window's gap, the events held, a gap
    /// at the hole, then the rest; each gap counted.
    @Test(arguments: HubExecutor.allCases) func resumeAcrossSkippedIds(_ executor: HubExecutor) async throws {
        let hub = hub(executor, count: 3)
        for id in UInt64(1)...3 { _ = try await hub.apply(topic: "t", channel: .events, data: "e\(id)", event: nil, id: id) }
        await hub.skipEvents(topic: "t", after: 3, through: 9)
        _ = try await hub.apply(topic: "t", channel: .events, data: "e10", event: nil, id: 10)
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 0)
        let events = try parse(await sub.takePending())
        #expect(events.map(\.event) == ["gap", nil, nil, "gap", nil])
        #expect(events.map(\.data) == ["1", "e2", "e3", "4", "e10"])
        #expect(hub.counters.gapEvents == 2)
    }

    /// A window emptied by age while N < last id yields only the gap.
    @Test(arguments: HubExecutor.allCases) func emptyWindowYieldsGapOnly(_ executor: HubExecutor) async throws {
        let clock = ManualClock()
        let hub = hub(executor, maxAge: .seconds(10), clock: clock)
        try await publish(hub, 1...4)
        let keepTopic = await hub.subscribe(topic: "t", channel: .state)  // Keeps the topic (and its ids) alive.
        clock.advance(by: .seconds(11))
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 2)
        #expect(try parse(await sub.takePending()) == [SSEEvent(id: nil, event: "gap", data: "3")])
        _ = keepTopic
    }

    /// Replay and live events join without gap or duplicate, even with publishes racing.
    @Test(arguments: HubExecutor.allCases) func replayThenLiveNoDuplicate(_ executor: HubExecutor) async throws {
        let hub = hub(executor)
        try await publish(hub, 1...50)
        let publisher = Task { try await publish(hub, 51...200) }
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 20)
        try await publisher.value
        #expect(try await sub.receive(180).map(\.number) == (21...200).map { UInt64($0) })
    }
}
