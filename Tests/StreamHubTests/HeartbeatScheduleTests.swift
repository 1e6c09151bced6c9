import Testing
@testable import StreamHub

/// The hub says when the next heartbeat is due, so the gateway wakes exactly then
/// (driven on a manual clock, turn by turn).
struct HeartbeatScheduleTests {
    /// A round answers the moment the earliest silence reaches the interval; at that moment the heartbeat is queued.
    @Test func nextHeartbeatIsTheEarliestSilenceEnd() async throws {
        let clock = ManualClock()
        let t0 = clock.now
        let hub = Hub(configuration: .testing(clock: clock))
        let quiet = await hub.subscribe(topic: "a", channel: .events)
        clock.advance(by: .milliseconds(300))
        let later = await hub.subscribe(topics: ["b", "c"], channel: .state)
        clock.advance(by: .milliseconds(100))
        // Turn 1 (0.4 s): nobody is due; the first silence ends at 1 s.
        #expect(await hub.sendHeartbeats(idleFor: .seconds(1)) == t0 + .seconds(1))
        #expect(quiet.pendingCount == 0)
        // Turn 2 (1 s): `quiet` gets its heartbeat then; `later`'s silence ends at 1.3 s.
        clock.advance(by: .milliseconds(600))
        #expect(await hub.sendHeartbeats(idleFor: .seconds(1)) == t0 + .milliseconds(1300))
        #expect(quiet.pendingCount == 1)
        #expect(later.pendingCount == 0)
        // Turn 3 (1.3 s): `later`'s; `quiet` has its heartbeat pending, so nobody else waits.
        clock.advance(by: .milliseconds(300))
        #expect(await hub.sendHeartbeats(idleFor: .seconds(1)) == nil)
        #expect(later.pendingCount == 1)
        // Its consumer takes it: its next silence ends an interval after that heartbeat.
        _ = await quiet.nextBatch()
        #expect(await hub.sendHeartbeats(idleFor: .seconds(1)) == t0 + .seconds(2))
    }
}
