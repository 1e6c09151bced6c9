/// One shard of a `ShardedEngine`: an engine holding a share of the topics in a hub
/// of its own, on one event loop: the in-memory `Hub` itself, or the cluster engine
/// with its mirror hub. What a several-topic stream whose topics live in several
/// shards needs of each: its topics readied before any shard registers the
/// subscriber (the cluster's are followed and fenced; a hub's are always ready), then
/// its hub's tables to join.
public protocol EngineShard: StreamEngine, AnyObject {
    /// The hub whose tables hold this shard's subscribers (a `Hub` is its own).
    var tables: Hub { get }

    /// Readies `topics`, this shard's share of a stream's, for a subscriber that joins
    /// `tables` next: once this returns, joining starts each topic no older than what
    /// any publisher had been acknowledged when it was called. `endJoin(topics:)` must
    /// follow, joined or not.
    /// - Parameter resumeAfter: one position per topic of `topics`, when resuming.
    /// - Throws: `.unavailable` when the shard cannot vouch for the snapshot now; then
    ///   nothing is held and `endJoin` is not called.
    func prepareJoin(topics: [String], channel: Channel, resumeAfter: [UInt64?]?) async throws(SubscribeError)

    /// Lets go of what `prepareJoin` held for `topics`: the subscriber is in `tables`
    /// now, or another shard refused it.
    func endJoin(topics: [String]) async

    /// Subscribers of one topic's channel in this shard (several-topic ones included).
    func subscriberCount(topic: String, channel: Channel) async -> Int
}

extension Hub: EngineShard {
    public nonisolated var tables: Hub { self }

    /// A hub's topics are always ready: nothing to do.
    public nonisolated func prepareJoin(topics: [String], channel: Channel,
                                        resumeAfter: [UInt64?]?) async throws(SubscribeError) {}

    public nonisolated func endJoin(topics: [String]) async {}
}
