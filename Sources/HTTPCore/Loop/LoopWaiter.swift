/// A suspended task waiting for readiness, with its optional deadline.
///
/// The continuation is unsafe (no checked box: one allocation less per wait, that is per
/// request): a waiter lives in exactly one place, its descriptor's slot for its role, and
/// whoever takes it out of the slot under the loop's lock (readiness, a deadline, a
/// close, cancellation) is the one who resumes it, so it is resumed exactly once.
struct Waiter {
    let id: UInt64
    let interest: Interest
    let continuation: UnsafeContinuation<Void, Error>
    let deadline: LoopDeadline?
}

/// A wait's deadline as an offset from one instant fixed at start-up, stored as a
/// `Duration`. Why not the `ContinuousClock.Instant` itself: that type is resilient (not
/// frozen in the standard library), so a `Waiter` holding one has no fixed layout, and
/// every copy of a descriptor's slot under the loop's lock went through value-witness
/// calls (`initializeWithCopy for Slot`, the generic enum-tag functions): about 5 % of a
/// publish request's instructions by callgrind (bench/request-path.md, issue 27).
struct LoopDeadline: Comparable {
    /// Since `base`.
    let offset: Duration

    private static let base = ContinuousClock.now

    init(_ instant: ContinuousClock.Instant) {
        offset = instant - Self.base
    }

    /// Whether the deadline is at or before `now`.
    func hasPassed(at now: ContinuousClock.Instant) -> Bool {
        offset <= now - Self.base
    }

    static func < (lhs: LoopDeadline, rhs: LoopDeadline) -> Bool { lhs.offset < rhs.offset }
}
