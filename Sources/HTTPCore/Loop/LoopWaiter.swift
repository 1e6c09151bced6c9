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
/// `Duration`: the deadline the loop's waits and the connection's internal reads and
/// writes pass around. Why not the `ContinuousClock.Instant` itself: that type is
/// resilient (not frozen in the standard library), so it has no fixed layout outside it.
/// - A `Waiter` holding one made every copy of a descriptor's slot under the loop's lock
///   go through value-witness calls (`initializeWithCopy for Slot`, the generic enum-tag
///   functions): about 5 % of a publish request's instructions by callgrind.
/// - In an async function every instant (a parameter passed on, an optional unwrapped,
///   `now + timeout`) is a task-allocator allocation and its release: 17 of them a
///   publish request in the request loop alone (bench/request-path.md, issue 27).
/// The public API keeps taking instants; they become a `LoopDeadline` once, in
/// `from(_:)`, a synchronous frame.
struct LoopDeadline: Comparable, Hashable, Sendable {
    /// Since `base`.
    let offset: Duration

    private static let base = ContinuousClock.now

    init(_ instant: ContinuousClock.Instant) {
        offset = instant - Self.base
    }

    init(offset: Duration) {
        self.offset = offset
    }

    /// The deadline as an instant of the continuous clock.
    var instant: ContinuousClock.Instant { Self.base + offset }

    /// `instant` as a deadline (nil stays nil). Not inlined: the instant's temporaries
    /// stay on the thread's stack instead of the calling task's allocator.
    @inline(never)
    static func from(_ instant: ContinuousClock.Instant?) -> LoopDeadline? {
        instant.map(LoopDeadline.init)
    }

    /// `duration` from now. Not inlined, for the same reason as `from(_:)`.
    @inline(never)
    static func after(_ duration: Duration) -> LoopDeadline {
        LoopDeadline(.now + duration)
    }

    /// Whether the deadline is at or before `now`.
    func hasPassed(at now: ContinuousClock.Instant) -> Bool {
        offset <= now - Self.base
    }

    static func < (lhs: LoopDeadline, rhs: LoopDeadline) -> Bool { lhs.offset < rhs.offset }
}
