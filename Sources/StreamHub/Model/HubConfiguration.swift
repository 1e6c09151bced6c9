/// The hub's limits, in one place. Every bound the hub keeps is derived from these.
public struct HubConfiguration: Sendable {
    /// Frames an events subscriber may have pending. A push finding this many pending
    /// finishes the subscriber with `.overflow` instead. Must be at least 1.
    public var eventsQueueLimit = 1024
    /// Events held per topic for `Last-Event-ID` resumption. 0 disables replay.
    public var replayCount = 256
    /// Events older than this leave the replay window. An event aged exactly
    /// `replayMaxAge` is still held; it leaves once strictly older.
    public var replayMaxAge: Duration = .seconds(300)
    /// The clock the hub reads for ages and idleness; tests inject a manual one.
    public var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

    public init() {}
}
