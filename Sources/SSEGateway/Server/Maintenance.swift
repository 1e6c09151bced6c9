import StreamHub

/// Runs an engine's periodic work at its deadlines on `clock` (`MaintenanceSchedule`
/// decides what and when): heartbeats the moment a subscriber's silence reaches the
/// interval, sweeps once a period. Until the task is cancelled.
struct Maintenance<C: Clock>: Sendable where C.Instant == ContinuousClock.Instant {
    let engine: any StreamEngine
    let heartbeatInterval: Duration
    let clock: C

    func run() async {
        var schedule = MaintenanceSchedule(start: clock.now, heartbeatInterval: heartbeatInterval)
        while true {
            do {
                try await clock.sleep(until: schedule.wakeAt, tolerance: nil)
            } catch {
                return  // Cancelled: the gateway is stopping.
            }
            let now = clock.now
            let due = schedule.due(at: now)
            if due.heartbeats {
                let nextSilence = await engine.sendHeartbeats(idleFor: heartbeatInterval)
                schedule.heartbeatsSent(at: now, nextSilence: nextSilence)
            }
            if due.sweep { await engine.sweep() }
        }
    }
}
