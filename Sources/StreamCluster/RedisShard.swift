import RedisClient

/// Which shard of Redis holds a topic: a value the engine asks, so that routing is
/// one decision in one place. A single Redis, or the master Sentinel names, is one
/// shard (index 0). On Redis Cluster a topic's shard is the master serving its hash
/// slot (`{topic}` in every key): the routing holds, per slot, the index of the
/// engine's `RedisShard` for that master, from the last slot map read.
struct ShardRouting: Sendable {
    /// Per hash slot, the index of its shard (-1: no master serves it); nil: everything on shard 0.
    private let owners: [Int32]?

    /// Everything on one shard.
    static let single = ShardRouting(owners: nil)

    /// Redis Cluster before its first slot map: no topic has a shard.
    static let unserved = ShardRouting(owners: [Int32](repeating: -1, count: HashSlot.count))

    private init(owners: [Int32]?) {
        self.owners = owners
    }

    /// `shardIndices[i]`: the engine's shard for `map.shards[i]`.
    init(map: SlotMap, shardIndices: [Int]) {
        var owners = [Int32](repeating: -1, count: HashSlot.count)
        for (shard, index) in zip(map.shards, shardIndices) {
            for range in shard.slots {
                for slot in range { owners[slot] = Int32(index) }
            }
        }
        self.owners = owners
    }

    /// Whether topics are spread over the masters of a Redis Cluster.
    var isCluster: Bool { owners != nil }

    /// The shard (an index into the engine's shards) that holds `topic`; nil while
    /// no master serves its slot.
    func shard(of topic: String) -> Int? {
        guard let owners else { return 0 }
        let owner = owners[HashSlot(key: topic).value]
        return owner < 0 ? nil : Int(owner)
    }
}

/// What the engine keeps per shard of Redis: the link's phase and what belongs to
/// that Redis alone — its epoch (a shard that restarts empty is noticed on its own),
/// this gateway's probes through its pub/sub, the subscriber counts written there,
/// whether it still has to mark itself raised for a pause there, whether a new
/// master was named (and the nudge its supervision waits on); in Sentinel mode the
/// sentinel asked first; on Redis Cluster, the master it links to and the hash tag of its keys.
struct RedisShard: Sendable {
    var phase: LinkPhase = .connecting(attempt: 0, master: nil) {
        didSet { link = phase.link }
    }
    /// The link while `phase` is up (read on every publish: no copy of the phase and its master's URL).
    private(set) var link: RedisLink?
    /// The generation of the newest link made (messages of older ones are ignored).
    var generation: UInt64 = 0
    /// The epoch of this Redis as last seen (nil before the first link).
    var knownEpoch: String? {
        didSet { if knownEpoch != oldValue { publishConstants = nil } }
    }
    /// The server's `run_id` and epoch as the last link found them both (nil: none yet,
    /// or `INFO` refused): another `run_id` with the same epoch is a restart of the same
    /// server with its data. Kept together, so that a link attempt that failed between
    /// the two looks (the epoch checked, `INFO` not answered) does not pair an empty
    /// restart's new epoch with the old `run_id`.
    var server: (runID: String, epoch: String)?
    /// A link found the same server restarted with its data (`run_id` another, the epoch
    /// the same): it may have come back from a save older than its last publishes. Set
    /// until the next installed link has started the pause for it.
    var restartedWithItsData = false
    /// The link this gateway gave up because a publish found the epoch gone or another
    /// (`EPOCHLOST`): its publishes cut off by the close were refused by Redis too.
    var epochLostGeneration: UInt64?
    var probesSent: UInt64 = 0
    var probesSeen: UInt64 = 0
    /// Write every count (and delete those written before) next time: after a new
    /// link, a lapsed liveness key, and every tenth heartbeat.
    var countsNeedFullWrite = true
    var heartbeats: UInt64 = 0
    /// Sentinel mode: the sentinel that answered last (asked first next time).
    var sentinelIndex = 0
    /// Set when a new master was named (Sentinel's `+switch-master`, the slot map): a
    /// back-off or a connect attempt under way ends, and the next one is tried at once.
    var relinkRequested = false
    /// Nudged when a new master is named, a connection of the link closes, or the engine shuts down.
    let wakeup = ShardWakeup()
    /// A pause runs on this Redis (after a failover, or found when linking) and this
    /// gateway has not yet marked itself raised for it: it does once its syncs of the
    /// shard's followed topics are done (`ClusterEngine+Pause`).
    var raisePending = false
    /// A topic's raise (`raiseIDs`) failed on this link (an error reply, e.g. OOM):
    /// this gateway never marks itself raised, and the pause lasts its time to live.
    var raiseFailed = false
    /// How many more times (every 100 ms) the pause is looked at although none was seen:
    /// after a failover, another gateway arriving later may start a new one.
    var pauseWatchTurns = 0
    /// Redis Cluster: the master serving this shard's slots in the last map (nil: none).
    var clusterMaster: ClusterNode?
    /// Redis Cluster: the master and replicas of the last map (a promoted replica is this shard's new master).
    var clusterNodes: Set<ClusterAddress> = []
    /// The keys of this Redis (`ShardKeys.global` unless on Redis Cluster).
    var keys = ShardKeys.global {
        didSet { if keys != oldValue { publishConstants = nil } }
    }
    /// The publish script's arguments that every publish to this shard shares (the first
    /// eight ARGV of `ClusterScripts.publish`), encoded on the first publish after `keys`
    /// changed (`ClusterEngine.publishConstants`), not once per publish.
    var publishConstants: RedisArguments?
    /// Redis Cluster: no slot of the map is served by this shard any more (its link is closed for good).
    var retired = false
}
