import Locking
import RedisClient
import StreamHub
import Synchronization

/// The Redis engine: several gateway processes given the same Redis are one gateway
/// to clients (API.md, "A cluster of gateways on Redis").
///
/// Ids, state values and replay windows live in Redis, written by one Lua script
/// (`ClusterScripts.publish`, several publishes to a call under load: `PublishBatcher`)
/// that assigns each value its id, stores it and announces it on the topic's pub/sub channel. Each gateway follows the topics its
/// subscribers want (`FollowedTopic`): subscribed to their channels, with its own
/// `Hub` as a mirror that fans each message out to the local subscribers (one
/// pub/sub message per topic per gateway). A new subscriber first waits for its
/// fence: the mirror must hold at least the ids Redis held when it arrived, so it
/// starts no older than anything acknowledged to a publisher anywhere.
///
/// While Redis is unreachable: publishes and new subscriptions throw `.unavailable`
/// (503), open subscriptions stay with their heartbeats; once Redis is back every
/// followed topic syncs from where its mirror stands (missed events from the
/// window, or a `gap`). Ids never go backwards: a Redis that came back empty, or a
/// replica promoted by Sentinel that may lack the last publishes, has its counters
/// raised to the ids the mirrors hold while publishes pause. With Sentinel the master is found through
/// the sentinels and followed through failovers (`ClusterEngine+Sentinel`). On Redis
/// Cluster every master of the slot map is a shard with its own link, epoch, pause,
/// liveness and probe; a topic lives on the master of its hash slot and travels on
/// sharded pub/sub (`ClusterEngine+SlotMap`); one shard's loss touches only its topics.
/// `isReady` (`/readyz`) is true exactly while a publish and a new subscription
/// would be served (`Readiness`, which also says why not).
///
/// Runs on the executor it is given (the event loop's, with the hub and the
/// connections), so its calls into the hub cost no thread hop.
public actor ClusterEngine: EngineShard {
    let configuration: ClusterConfiguration
    /// The mirror. It runs on the engine's executor (`init`), so whatever is isolated to
    /// the engine is isolated to it too, and calls it through `assumeIsolatedUnchecked`.
    let hub: Hub
    /// Where the engine and its hub run (`onEngine` runs in place on its thread).
    nonisolated let executor: any SerialExecutor
    /// What `/readyz` reads; set as the links' phases change, dropped the moment a connection closes.
    nonisolated let readiness: Readiness
    private nonisolated let reconnectCount = Atomic<UInt64>(0)
    private nonisolated let failoverCount = Atomic<UInt64>(0)
    /// Times a new subscriber's fence was overdue while its topic was live (`ClusterEngine+Fence`):
    /// a message on its way was late or lost, and the topic synced again.
    nonisolated let fenceOverdueCount = Atomic<UInt64>(0)

    /// The shards of Redis and their links (each one's phase: connecting, up with its
    /// connections, or shut down): one for a single Redis or Sentinel, one per master
    /// of the slot map on Redis Cluster (indices stable: a shard is retired, never removed).
    var shards: [RedisShard]
    /// Which shard holds a topic (`.single`, or from the last slot map).
    var routing: ShardRouting
    /// Redis Cluster: where the slot map is read, and the last one applied.
    let slotMaps: SlotMapSource?
    var appliedMap: SlotMap?
    /// Redis Cluster: map refreshes asked for, and the count the last finished fetch
    /// started after (subscribes wait while a refresh asked for is outstanding).
    var mapRequests: UInt64 = 0
    var mapServed: UInt64 = 0
    /// Redis Cluster: nodes found unreachable, for the next refresh to ask last.
    var lostNodes: Set<ClusterAddress> = []
    /// The shard each followed topic is subscribed on (or being subscribed on).
    var topicShard: [String: Int] = [:]
    /// The last link generation given out (unique over every shard).
    var lastGeneration: UInt64 = 0
    var isShutdown = false
    /// Shards whose supervision is to start (the run loop takes them).
    nonisolated let newShards: AsyncStream<Int>
    nonisolated let newShardsContinuation: AsyncStream<Int>.Continuation
    /// The link of shard `index` while it is up.
    func link(shard index: Int) -> RedisLink? { index < shards.count ? shards[index].link : nil }
    /// The link of the shard `topic` is routed to, while it is up.
    func link(of topic: String) -> RedisLink? { routing.shard(of: topic).flatMap { link(shard: $0) } }
    var followed: [String: FollowedTopic] = [:]
    /// `--redis-min-replicas`: per shard, whose publish's script and `WAIT` run now.
    var replicaTurns: [Int: ReplicaTurns] = [:]
    /// The subscribers waiting for their fence (`ClusterEngine+Fence`).
    var fenceWaits = FenceWaits()
    /// The subscribers waiting for their fences to be read (the next round, or one under way).
    var fenceReads = FenceReads()
    /// Script hashes from `SCRIPT LOAD` (the script text is sent again on `NOSCRIPT`).
    var scriptHashes: [String: String] = [:]
    /// Whether a single server's refusal of `ROLE` was logged (once: `masterRole`).
    var roleRefusalLogged = false
    /// Whether `INFO server` was refused once (said once: restarts are then not told from reconnects).
    var infoRefusalLogged = false
    /// Subscriber counts last written to Redis, per topic.
    var writtenCounts: [String: (state: Int, events: Int)] = [:]
    /// Topics whose UNSUBSCRIBE is not confirmed yet: a new SUBSCRIBE of one waits for it.
    var unsubscribing: Set<String> = []
    /// `SUBSCRIBE` batches confirmed, syncs answered and rounds of fence reads answered
    /// so far: a fence whose topic still catches up waits on while this moves
    /// (`FollowedTopic.fenceOverdue`).
    var catchUpProgress: UInt64 = 0
    /// Sync scripts sent and not answered yet (at most `maxSyncsInFlight`).
    var syncsInFlight = 0
    /// Rings the worker (SUBSCRIBEs and syncs to send); holds at most one ring.
    nonisolated let doorbell: AsyncStream<Void>
    nonisolated let doorbellRinger: AsyncStream<Void>.Continuation

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    public nonisolated var counters: HubCounters { hub.counters }

    /// The mirror, whose tables hold this engine's subscribers.
    public nonisolated var tables: Hub { hub }

    public nonisolated var isReady: Bool { readiness.isReady }

    public nonisolated var notReadyReason: String? { readiness.reason }

    public nonisolated var servesSubscriptions: Bool { readiness.servesSubscriptions }

    public nonisolated var metrics: [EngineMetric] {
        var metrics = [
            EngineMetric(name: "sse_gateway_redis_up", help: "1 while the cluster's Redis answers (on Redis Cluster: every master), else 0.",
                         kind: .gauge, value: readiness.isLinkUp ? 1 : 0),
            EngineMetric(name: "sse_gateway_redis_reconnects_total",
                         help: "Connections to Redis made again after one was lost (with several loops, every loop's links).",
                         kind: .counter, value: reconnectCount.load(ordering: .relaxed)),
            EngineMetric(name: "sse_gateway_redis_failovers_total",
                         help: "Times this gateway found the Redis master at another address (Sentinel failovers).",
                         kind: .counter, value: failoverCount.load(ordering: .relaxed), merge: .largest),
            EngineMetric(name: "sse_gateway_redis_fences_overdue_total",
                         help: "Times a new subscriber's topic, live here, had not reached what Redis held at its arrival within the fence time (500 ms): a pub/sub message late or lost; the topic synced again.",
                         kind: .counter, value: fenceOverdueCount.load(ordering: .relaxed)),
        ]
        if let slotMaps {
            metrics.append(EngineMetric(name: "sse_gateway_redis_shards",
                                        help: "Masters in the Redis Cluster's slot map as last read (one link each).",
                                        kind: .gauge, value: UInt64(slotMaps.current?.shards.count ?? 0)))
            metrics.append(EngineMetric(name: "sse_gateway_redis_slot_refreshes_total",
                                        help: "Times the Redis Cluster's slot map was read (start, MOVED, a moved channel, a lost node, polls; with several loops, by each loop).",
                                        kind: .counter, value: slotMaps.fetches))
        }
        return metrics
    }

    /// - Parameter executor: where the engine and its hub run (the gateway gives its
    ///   event loop's); nil for a serial queue of their own.
    public init(configuration: ClusterConfiguration, executor: (any SerialExecutor)? = nil) {
        self.init(configuration: configuration, executor: executor, counters: HubCounters(), subscriberIDs: SubscriberIDs())
    }

    /// An engine whose mirror shares its counters and subscriber ids with others (the
    /// shards of a `ShardedEngine`, one per event loop; each needs a `gatewayID` of its own).
    package init(configuration: ClusterConfiguration, executor: (any SerialExecutor)?, counters: HubCounters,
                 subscriberIDs: SubscriberIDs) {
        let executor = executor ?? QueueExecutor(label: "streams.cluster")
        self.configuration = configuration
        var hubConfiguration = configuration.hub
        hubConfiguration.forgetsIdleTopics = false  // The engine decides what the mirror holds.
        self.hub = Hub(configuration: hubConfiguration, executor: executor, counters: counters, subscriberIDs: subscriberIDs)
        self.executor = executor
        (doorbell, doorbellRinger) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        (newShards, newShardsContinuation) = AsyncStream.makeStream(of: Int.self)
        if case .cluster(let url) = configuration.redis {
            shards = []
            routing = .unserved
            slotMaps = SlotMapSource(seeds: url.seeds, timeout: configuration.connectTimeout)
            readiness = Readiness(shards: 0, overall: .unreachable("the cluster's slot map is not read yet"))
        } else {
            shards = [RedisShard()]
            routing = .single
            slotMaps = nil
            readiness = Readiness()
            newShardsContinuation.yield(0)
        }
    }

    /// A connection of link `generation` closed `because`: not ready from now on (the
    /// monitor then tears the link down and reconnects). Logged when it took a live link
    /// down (not the closes of a link this gateway gave up, `linkLost`, which says why
    /// itself, nor the link's other connections).
    nonisolated func connectionClosed(generation: UInt64, because end: RedisConnectionEnd) {
        if readiness.connectionClosed(generation: generation, because: end) {
            configuration.log("redis: a connection of link \(generation) closed: \(end)")
        }
    }

    func countReconnect() {
        reconnectCount.add(1, ordering: .relaxed)
    }

    func countFailover() {
        failoverCount.add(1, ordering: .relaxed)
    }

    // MARK: - StreamEngine

    /// A stream of one topic or several: every topic is followed and fenced (each
    /// mirror holds at least what Redis held when the subscriber arrived), then one hub
    /// call registers the subscriber in all of them at once.
    public func subscribe(topics slots: TopicSlots, channel: Channel,
                          resumeAfter: [UInt64?]?) async throws(SubscribeError) -> Subscription {
        try await prepareJoin(topics: slots.names, channel: channel, resumeAfter: resumeAfter)
        defer { endJoin(topics: slots.names) }
        return await hub.subscribe(topics: slots, channel: channel, resumeAfter: resumeAfter)
    }

    /// Follows and fences `topics` for a subscriber that joins the mirror next (this
    /// engine's share of a stream, or all of it): once this returns, the mirror holds
    /// at least what Redis held when it was called, and the topics stay followed
    /// until `endJoin`. After `shutdown()` it holds nothing (joining then finishes the
    /// subscriber).
    /// - Throws: `.unavailable` when a topic's shard of Redis does not serve now.
    public func prepareJoin(topics: [String], channel: Channel, resumeAfter: [UInt64?]?) async throws(SubscribeError) {
        guard !isShutdown else { return }
        // Every topic's shard must serve now (a several-topic stream may span shards).
        var links: [RedisLink] = []
        for topic in topics {
            guard let shard = routing.shard(of: topic), let link = link(shard: shard),
                  readiness.isReady(shard: shard) else { throw .unavailable }
            links.append(link)
        }
        for topic in topics {
            follow(topic)
            followed[topic]?.subscriberArrived()
        }
        do throws(SubscribeError) {
            try await fence(topics: topics, channel: channel, resumeAfter: resumeAfter, links: links)
        } catch {
            endJoin(topics: topics)
            throw error
        }
    }

    /// The subscriber of `prepareJoin(topics:…)` is in the mirror now, or gone.
    public func endJoin(topics: [String]) {
        guard !isShutdown else { return }
        for topic in topics { followed[topic]?.subscriberRegistered() }
    }

    /// Reads the fences of `topics` (what Redis holds now, in the next round, with every
    /// subscriber arriving meanwhile: one read per topic per round, `FenceReads`) and
    /// waits until the mirror holds them.
    private func fence(topics: [String], channel: Channel, resumeAfter: [UInt64?]?,
                       links: [RedisLink]) async throws(SubscribeError) {
        let read = await readFences(of: topics)
        var replies: [RedisValue] = []
        for topic in topics {
            guard let reply = read[topic] else { throw .unavailable }
            replies.append(reply)
        }
        // Only wait on the link the fences were read from: a waiter added after the link
        // was lost or the engine shut down would have nobody left to resume it.
        guard !isShutdown, zip(topics, links).allSatisfy({ self.link(of: $0)?.generation == $1.generation }) else {
            throw .unavailable
        }
        for (slot, topic) in topics.enumerated() {
            guard let (state, events) = await fence(topic: topic, reply: replies[slot], channel: channel,
                                                    resumeAfter: resumeAfter?[slot] ?? nil, link: links[slot]),
                  await reachFence(topic: topic, state: state, events: events) else { throw .unavailable }
        }
    }

    /// Subscribers of one topic's channel in the mirror.
    public func subscriberCount(topic: String, channel: Channel) -> Int {
        hub.assumeIsolatedUnchecked((topic, channel)) { hub, value in hub.subscriberCount(topic: value.0, channel: value.1) }
    }

    public func snapshot() async -> HubSnapshot {
        await hub.snapshot()
    }

    public func sendHeartbeats(idleFor: Duration) async -> ContinuousClock.Instant? {
        await hub.sendHeartbeats(idleFor: idleFor)
    }

    public func shutdown() async {
        guard !isShutdown else { return }
        isShutdown = true
        let links = shards.map(\.link)
        let keys = shards.map(\.keys)
        for index in shards.indices {
            shards[index].phase = shards[index].phase.after(.shutdown)
            shards[index].wakeup.signal()  // Back-offs and connect attempts end now.
        }
        readiness.down(.shutDown)
        topicsLostTheLink()
        refuseFenceReads()
        doorbellRinger.finish()
        newShardsContinuation.finish()
        refuseReplicaTurns()
        for (link, keys) in zip(links, keys) {
            guard let link else { continue }
            // Leave the count at once rather than when the liveness key expires.
            _ = try? await link.command.command(["DEL", keys.gateway(configuration.gatewayID)], timeout: .milliseconds(200))
            link.close()
        }
        await hub.shutdown()
    }

    // MARK: - Following topics

    /// Starts following `topic` if this gateway does not yet.
    func follow(_ topic: String) {
        guard followed[topic] == nil else { return }
        followed[topic] = FollowedTopic()
        doorbellRinger.yield()
    }
}

extension ClusterEngine {
    /// The ids this gateway's mirror holds for `topic` (tests and diagnostics).
    func heldIDs(_ topic: String) -> (state: UInt64, events: UInt64) {
        guard let entry = followed[topic] else { return (0, 0) }
        return (entry.lastState, entry.lastEvents)
    }
}
