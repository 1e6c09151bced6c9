/// A token bucket over a clock's instants: `burst` events at once, refilled at
/// `perSecond`. A pure value, driven by the instants it is given (tests step them).
struct HTTP2AbuseBudget<C: Clock> where C.Duration == Duration {
    let burst: Double
    let perSecond: Double
    private var tokens: Double
    private var last: C.Instant?

    init(burst: Int, perSecond: Int) {
        self.burst = Double(burst)
        self.perSecond = Double(perSecond)
        tokens = Double(burst)
    }

    /// Spends one token at `now`; false when the budget is exhausted (abuse).
    mutating func spend(at now: C.Instant) -> Bool {
        if let last {
            let elapsed = last.duration(to: now)
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            tokens = min(burst, tokens + max(0, seconds) * perSecond)
        }
        last = now
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }
}
