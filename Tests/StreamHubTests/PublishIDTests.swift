import Testing
@testable import StreamHub

struct PublishIDTests {
    /// Ids start at 1 and grow by one per publish on each topic and channel.
    @Test(arguments: HubExecutor.allCases) func idsCountFromOne(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        for expected: UInt64 in 1...5 {
            #expect(try await hub.publish(topic: "t", channel: .events, data: "x").id == expected)
        }
    }

    /// An external id not greater than the last is rejected with the last id, changing nothing.
    @Test(arguments: HubExecutor.allCases) func staleExternalIDRejected(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        let sub = await hub.subscribe(topic: "t", channel: .events)
        _ = try await hub.publish(topic: "t", channel: .events, data: "a", event: nil, id: 10)
        for stale: UInt64 in [10, 9, 0] {
            await #expect(throws: PublishError.staleID(last: 10)) {
                try await hub.publish(topic: "t", channel: .events, data: "b", event: nil, id: stale)
            }
        }
        await #expect(throws: PublishError.staleID(last: 0)) {
            try await hub.publish(topic: "fresh", channel: .state, data: "b", event: nil, id: 0)
        }
        #expect(try parse(await sub.takePending()).map(\.data) == ["a"])
        #expect(hub.counters.publishes(.events) == 1)
        #expect(await hub.snapshot().topics == 1)  // "fresh" was not created.
    }

    /// External ids may skip; local ids continue after the newest; skipped ids are not gaps.
    @Test(arguments: HubExecutor.allCases) func skippingIDsAllowed(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        #expect(try await hub.publish(topic: "t", channel: .events, data: "a", event: nil, id: 5).id == 5)
        #expect(try await hub.publish(topic: "t", channel: .events, data: "b", event: nil, id: 50).id == 50)
        #expect(try await hub.publish(topic: "t", channel: .events, data: "c").id == 51)
        let sub = await hub.subscribe(topic: "t", channel: .events, lastEventID: 7)
        #expect(try parse(await sub.takePending()).map(\.number) == [50, 51])
    }

    /// The largest id is accepted once; a local publish after it is stale, not a wrap to 0.
    @Test(arguments: HubExecutor.allCases) func noWrapAtMaximum(_ executor: HubExecutor) async throws {
        let hub = Hub(configuration: .testing(), executor: executor.serialExecutor)
        _ = try await hub.publish(topic: "t", channel: .state, data: "a", event: nil, id: .max)
        await #expect(throws: PublishError.staleID(last: .max)) {
            try await hub.publish(topic: "t", channel: .state, data: "b")
        }
    }
}
