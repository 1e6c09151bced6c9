/// The continuous clock, read as `LoopDeadline`s: the clock of each connection's
/// `ConnectionLifecycle` in the server. Its instants have a fixed layout (a `Duration`
/// since start-up), where `ContinuousClock.Instant` is resilient: a lifecycle over it
/// copied its state through value-witness calls at every `switch (state, event)`,
/// about 1,000 instructions of a 36,000-instruction publish request (issue 27).
/// It tells the same time as `ContinuousClock` and sleeps on it.
struct LoopClock: Clock {
    var now: LoopDeadline { LoopDeadline(.now) }

    var minimumResolution: Duration { ContinuousClock().minimumResolution }

    func sleep(until deadline: LoopDeadline, tolerance: Duration?) async throws {
        try await ContinuousClock().sleep(until: deadline.instant, tolerance: tolerance)
    }
}

extension LoopDeadline: InstantProtocol {
    func advanced(by duration: Duration) -> LoopDeadline {
        LoopDeadline(offset: offset + duration)
    }

    func duration(to other: LoopDeadline) -> Duration {
        other.offset - offset
    }
}
