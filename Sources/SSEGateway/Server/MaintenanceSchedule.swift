/// When the gateway's periodic work is due, as a pure value driven turn by turn
/// (an instant in, what to run and when to wake out), so it is tested with a
/// manual clock and runs on any `Clock` (`Maintenance`):
///
/// - heartbeats when the earliest subscriber's silence reaches the interval (the
///   engine says when that is, `StreamEngine.sendHeartbeats`), and at the latest
///   one interval after the last round, which covers every subscriber that joins
///   or writes meanwhile (its silence cannot end sooner);
/// - a sweep of what nothing needs any more every `sweepPeriod`.
struct MaintenanceSchedule<Instant: InstantProtocol> where Instant.Duration == Duration {
    let heartbeatInterval: Duration
    let sweepPeriod: Duration
    /// When heartbeats are next due.
    private(set) var nextHeartbeats: Instant
    /// When the next sweep is due.
    private(set) var nextSweep: Instant

    /// What is due at an instant.
    struct Due: Equatable {
        var heartbeats: Bool
        var sweep: Bool
    }

    /// - Precondition: both durations are positive.
    init(start: Instant, heartbeatInterval: Duration, sweepPeriod: Duration = .seconds(1)) {
        precondition(heartbeatInterval > .zero && sweepPeriod > .zero, "periods must be positive")
        self.heartbeatInterval = heartbeatInterval
        self.sweepPeriod = sweepPeriod
        nextHeartbeats = start.advanced(by: heartbeatInterval)
        nextSweep = start.advanced(by: sweepPeriod)
    }

    /// When to wake next: the earlier deadline.
    var wakeAt: Instant { min(nextHeartbeats, nextSweep) }

    /// What is due at `now`. A due sweep is scheduled a period after `now`; due
    /// heartbeats wait for `heartbeatsSent`, which says when the next ones are.
    mutating func due(at now: Instant) -> Due {
        let due = Due(heartbeats: now >= nextHeartbeats, sweep: now >= nextSweep)
        if due.sweep { nextSweep = now.advanced(by: sweepPeriod) }
        return due
    }

    /// Heartbeats went out at `now`; `nextSilence` is when the earliest subscriber
    /// that got none will have been silent for the interval (nil: none is waiting).
    /// The next round is then, never later than one interval on and never before
    /// `now` (a round that finds nothing due does not run again at once).
    mutating func heartbeatsSent(at now: Instant, nextSilence: Instant?) {
        let latest = now.advanced(by: heartbeatInterval)
        guard let nextSilence, nextSilence > now else {
            nextHeartbeats = latest
            return
        }
        nextHeartbeats = min(nextSilence, latest)
    }
}
