/// When one publisher's publishes are due: the k-th (from 0) at
/// `start + k / rate`, each computed from the start rather than from the last
/// wake-up, so late wake-ups never add up to drift. A publisher that falls
/// behind sends at once, without skipping, until it has caught up; the rate it
/// achieves is then what the server allowed. Pure arithmetic, no clock reads.
struct Pacer: Sendable {
    /// Due time of publish 0.
    let start: ContinuousClock.Instant
    /// Nothing is due at or after this.
    let end: ContinuousClock.Instant
    /// Publishes per second; 0 means "whenever the previous one is done".
    let rate: Double
    /// Publishes handed out so far.
    private(set) var issued = 0

    init(start: ContinuousClock.Instant, end: ContinuousClock.Instant, rate: Double) {
        self.start = start
        self.end = end
        self.rate = rate
    }

    /// When publish `k` is due (`start` for every k when unpaced).
    func due(_ k: Int) -> ContinuousClock.Instant {
        guard rate > 0 else { return start }
        return start + .nanoseconds(Int64((Double(k) * 1e9 / rate).rounded()))
    }

    /// Takes the next publish: when to send it (now if that is already past),
    /// or nil once it or `now` is at or after `end` (a publisher still behind
    /// at the end stops there: the shortfall shows in the achieved rate).
    mutating func next(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        let due = rate > 0 ? due(issued) : now
        guard due < end, now < end else { return nil }
        issued += 1
        return max(due, now)
    }
}
