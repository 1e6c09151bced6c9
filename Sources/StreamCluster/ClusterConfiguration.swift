import RedisClient
import StreamHub

/// How a gateway joins a cluster. Every gateway of one cluster must use the same
/// replay settings (`hub`), since they share one replay window per topic.
public struct ClusterConfiguration: Sendable {
    /// The Redis every gateway of the cluster uses: one server, or the master Sentinel names.
    public var redis: RedisEndpoint
    /// Acknowledge a publish only once this many replicas hold it (`WAIT`); 0: once the master does.
    public var minReplicas = 0
    /// Longest `WAIT` for those replicas before the publish is answered 503.
    public var minReplicasTimeout: Duration = .milliseconds(500)
    /// The longest pause of publishes after a failover. It ends as soon as every
    /// gateway live on the shard has raised the counters of its topics to the ids it
    /// holds; this bounds it when one never says so (3 s: a gateway that does not come
    /// back is no longer live 3 s after its last heartbeat anyway).
    public var failoverPause: Duration = .seconds(3)
    /// How long a failover pause waits at least for a gateway seen on the shard within
    /// the last minute whose liveness lapsed during the promotion (sooner when every
    /// such gateway has raised): one reaching the new master within it still raises
    /// before anyone publishes.
    public var failoverPauseMinimum: Duration = .seconds(1)
    /// The local hub's limits; the replay count and age also bound Redis's windows.
    public var hub: HubConfiguration
    /// Longest wait for a publish's script (a POST answers 503 past it, well within a second).
    public var commandTimeout: Duration = .milliseconds(750)
    /// Longest wait for a connection to Redis, and between two reconnect attempts.
    public var connectTimeout: Duration = .seconds(1)
    /// Longest wait for this gateway's copy of a topic to reach what Redis held when
    /// a subscriber arrived, before the topic is synced again from Redis (and as long
    /// again before the subscriber is refused with 503).
    public var fenceTimeout: Duration = .milliseconds(500)
    /// How long at most a new subscriber waits for its topic's catch-up (the
    /// `SUBSCRIBE` and first sync, which load the replay window: seconds for thousands
    /// of topics followed at once after a restart) while that catch-up moves on;
    /// `fenceTimeout` still refuses it when nothing moves in two of its times in a row,
    /// or its topic's sync failed. With the fence's own two times the longest wait is this plus twice
    /// `fenceTimeout` (and the fence's read).
    public var fenceCatchUpLimit: Duration = .seconds(20)
    /// How long a topic nobody here subscribes to is still followed: a topic whose
    /// subscribers come and go is not unsubscribed and synced again each time.
    public var followLinger: Duration = .seconds(5)
    /// Redis Cluster: how often the slot map is read when nothing asked for it (a
    /// `MOVED`, a moved subscription or a lost node reads it at once; a shard without a
    /// link, every 250 ms).
    public var slotMapRefreshInterval: Duration = .seconds(5)
    /// This gateway's name in the cluster (subscriber counts, liveness, probes): random per
    /// engine, so with several loops a process is one name per loop.
    public var gatewayID: String
    /// The clock the link's timers run on: the back-off between attempts, the monitor's
    /// ticks and probe interval, the sentinel watch's PINGs (tests may give a manual one).
    public var clock: any Clock<Duration> = ContinuousClock()
    /// Where the engine reports its link's changes (connected, lost, back).
    public var log: @Sendable (String) -> Void = { _ in }

    /// The longest back-off between two attempts to connect: `connectTimeout`, or with
    /// Sentinel at most 250 ms (the sentinels may name the new master any moment, and
    /// asking them is cheap).
    var reconnectCeiling: Duration {
        if case .sentinel = redis { return min(.milliseconds(250), connectTimeout) }
        return connectTimeout
    }

    /// `fenceCatchUpLimit` in times of `fenceTimeout`.
    var fenceCatchUpTimes: Int {
        guard fenceTimeout > .zero, fenceCatchUpLimit > .zero else { return 0 }
        return Int(min(fenceCatchUpLimit / fenceTimeout, 1_000_000))
    }

    /// The replay age in whole milliseconds (at least 1), as Redis takes it.
    var replayMaxAgeMilliseconds: Int64 {
        let (seconds, attoseconds) = hub.replayMaxAge.components
        return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }

    public init(redis: RedisURL, hub: HubConfiguration = HubConfiguration()) {
        self.init(redis: .server(redis), hub: hub)
    }

    public init(redis: RedisEndpoint, hub: HubConfiguration = HubConfiguration()) {
        self.redis = redis
        self.hub = hub
        gatewayID = Self.randomGatewayID()
    }

    /// A new random gateway id (64 bits, in hex): one per process, or one per engine
    /// when a process runs one on each event loop.
    public static func randomGatewayID() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 16)
    }
}
