/// When a publish stops waiting (the command timeout after it began), held as the
/// `ContinuousClock` time since a fixed instant. Why not the instant itself:
/// `ContinuousClock.Instant` is a resilient type (its size unknown to this module), so
/// every async frame that held one, or a value containing one, allocated a slot for it
/// from the task allocator, and its copies went through its metadata: five allocations
/// at the start of each publish on Redis (issue 24). `Duration` has a fixed layout.
struct PublishDeadline: Sendable, Comparable {
    /// The instant every deadline counts from: the first use.
    private static let epoch = ContinuousClock.now
    private let sinceEpoch: Duration

    @inline(never)
    init(_ instant: ContinuousClock.Instant) {
        sinceEpoch = Self.epoch.duration(to: instant)
    }

    /// `timeout` from now. (Nothing here that makes an instant is inlined: inlined into
    /// an async function, its instants would be task allocations there again.)
    @inline(never)
    static func after(_ timeout: Duration) -> PublishDeadline {
        PublishDeadline(.now + timeout)
    }

    /// Now, to compare deadlines with.
    @inline(never)
    static func now() -> PublishDeadline {
        PublishDeadline(.now)
    }

    var instant: ContinuousClock.Instant {
        @inline(never) get { Self.epoch + sinceEpoch }
    }

    /// Whether the deadline is still ahead `margin` from now.
    @inline(never)
    func isAhead(by margin: Duration = .zero) -> Bool {
        Self.epoch.duration(to: .now) + margin < sinceEpoch
    }

    static func < (lhs: PublishDeadline, rhs: PublishDeadline) -> Bool { lhs.sinceEpoch < rhs.sinceEpoch }
}
