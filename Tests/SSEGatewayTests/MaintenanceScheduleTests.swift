import Testing
@testable import SSEGateway

/// The gateway's periodic work, driven turn by turn on instants a test chooses (a
/// manual clock): heartbeats come when a subscriber's silence reaches the interval,
/// not on a once-a-second check.
struct MaintenanceScheduleTests {
    let t0 = ContinuousClock.now

    /// With nobody silent, heartbeats are looked at one interval after the start; sweeps come every period.
    @Test func firstDeadlines() {
        var schedule = MaintenanceSchedule(start: t0, heartbeatInterval: .seconds(15), sweepPeriod: .seconds(1))
        #expect(schedule.wakeAt == t0 + .seconds(1))
        #expect(schedule.due(at: t0 + .milliseconds(999)) == .init(heartbeats: false, sweep: false))
        #expect(schedule.due(at: t0 + .seconds(1)) == .init(heartbeats: false, sweep: true))
        #expect(schedule.wakeAt == t0 + .seconds(2))
        #expect(schedule.nextHeartbeats == t0 + .seconds(15))
    }

    /// A heartbeat round wakes exactly when the earliest subscriber's silence ends, then the next one's.
    @Test func heartbeatsAtTheEndOfEachSilence() {
        var schedule = MaintenanceSchedule(start: t0, heartbeatInterval: .seconds(10), sweepPeriod: .seconds(60))
        // Turn 1: the first round (nobody was silent long enough); one subscriber's silence ends at 13.4 s.
        #expect(schedule.due(at: t0 + .seconds(10)).heartbeats)
        schedule.heartbeatsSent(at: t0 + .seconds(10), nextSilence: t0 + .milliseconds(13_400))
        #expect(schedule.wakeAt == t0 + .milliseconds(13_400))
        // Turn 2: woken then, it is due at once, not up to a second later.
        #expect(!schedule.due(at: t0 + .milliseconds(13_399)).heartbeats)
        #expect(schedule.due(at: t0 + .milliseconds(13_400)).heartbeats)
        // Nobody else waits: the next round one interval on (anyone joining meanwhile is silent no sooner).
        schedule.heartbeatsSent(at: t0 + .milliseconds(13_400), nextSilence: nil)
        #expect(schedule.wakeAt == t0 + .milliseconds(23_400))
    }

    /// A next silence further away than one interval, or already past, is bounded: no round later than an interval, none again at once.
    @Test func nextRoundIsBounded() {
        var schedule = MaintenanceSchedule(start: t0, heartbeatInterval: .seconds(5), sweepPeriod: .seconds(60))
        schedule.heartbeatsSent(at: t0 + .seconds(5), nextSilence: t0 + .seconds(30))
        #expect(schedule.nextHeartbeats == t0 + .seconds(10))
        schedule.heartbeatsSent(at: t0 + .seconds(10), nextSilence: t0 + .seconds(9))
        #expect(schedule.nextHeartbeats == t0 + .seconds(15))
    }
}
