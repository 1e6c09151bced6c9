/// An instant of the hub's clock kept as a `Duration` since one instant fixed at
/// start-up; converts back exactly.
///
/// Why not `ContinuousClock.Instant` itself: that type is not frozen in the standard
/// library, so a `SubscriberQueue` holding two of them had no fixed layout, and every
/// access to it under its lock (a push per subscriber per publish, a take per write)
/// went through the runtime's value witnesses and generic metadata (issue 27,
/// bench/request-path.md). A `Duration` is frozen. The same holds of a `SubscriberPoll`
/// carrying one: copying and destroying it cost about 450 instructions a delivery.
public struct QueueTime: Equatable, Sendable {
    /// Since `base`.
    let sinceBase: Duration

    private static let base = ContinuousClock.now

    init(_ instant: ContinuousClock.Instant) {
        sinceBase = instant - Self.base
    }

    public var instant: ContinuousClock.Instant { Self.base + sinceBase }
}
