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
    /// Whether the hub forgets a topic once it holds nothing worth keeping (its last
    /// events id is remembered: `forgottenTopicsRemembered`). An engine that mirrors
    /// topics kept elsewhere turns this off and lets go of topics itself (`Hub.forgetUnsubscribed`), so the mirror's ids
    /// and its record of evicted events stay while the engine follows the topic.
    public var forgetsIdleTopics = true
    /// How many forgotten topics' last events ids the hub keeps (`ForgottenTopics`), the
    /// longest-forgotten let go first: about 150 bytes each with short names (the table
    /// and its eviction queue at their fullest), 2.5 MB in all; a long name adds its own
    /// copy. A topic used again goes on from its id; one forgotten longer ago than this
    /// starts again at 1.
    public var forgottenTopicsRemembered = 16_384
    /// The clock the hub reads for ages and idleness; tests inject a manual one.
    public var now: @Sendable () -> ContinuousClock.Instant = { ContinuousClock.now }

    public init() {}
}
