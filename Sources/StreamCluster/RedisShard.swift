/// Which shard of Redis holds a topic: a value the engine asks, so that routing is
/// one decision in one place. Today every deployment is one shard (a single Redis,
/// or the master Sentinel names); on Redis Cluster a topic's shard is the master
/// serving its hash slot (`{topic}` in every key), and the engine holds one
/// `RedisShard` per master it needs.
struct ShardRouting: Sendable, Equatable {
    /// How many shards topics are spread over.
    let shardCount: Int

    /// Everything on one shard.
    static let single = ShardRouting(shardCount: 1)

    /// The shard (an index into the engine's shards) that holds `topic`.
    func shard(of topic: String) -> Int { 0 }
}

/// What the engine keeps per shard of Redis: the link's phase and what belongs to
/// that Redis alone — its epoch (a shard that restarts empty is noticed on its own),
/// this gateway's probes through its pub/sub, and, in Sentinel mode, the sentinel
/// asked first and whether a new master was announced.
struct RedisShard: Sendable {
    var phase: LinkPhase = .connecting(attempt: 0, master: nil)
    /// The generation of the newest link made (messages of older ones are ignored).
    var generation: UInt64 = 0
    /// The epoch of this Redis as last seen (nil before the first link).
    var knownEpoch: String?
    var probesSent: UInt64 = 0
    var probesSeen: UInt64 = 0
    /// Sentinel mode: the sentinel that answered last (asked first next time).
    var sentinelIndex = 0
    /// Set when a sentinel announced a new master: the next connect is tried at once.
    var relinkRequested = false
}
