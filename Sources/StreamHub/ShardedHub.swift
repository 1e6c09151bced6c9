/// The in-memory engine spread over several hubs (shards), each on its own serial
/// executor: the gateway gives each of its event loops one, so with `--loops N` the
/// topics' work runs on N threads. A topic lives in exactly one shard, chosen by a
/// stable hash of its name, and every promise of `Hub` holds per topic unchanged:
/// ids, snapshot → live, order, replay, bounded queues, teardown to zero.
///
/// Shared by the shards: the counters (so `/metrics` reads one set) and the
/// subscriber ids. A several-topic stream whose topics live in several shards is
/// still one subscriber with one queue: its core joins each shard's tables in turn
/// (each join one actor call, so each topic's snapshot → live holds), and however it
/// finishes, every shard that holds it is told (`SubscriberCore`'s homes).
public final class ShardedHub: StreamEngine {
    /// The shards, in executor order; a topic's is `shards[shardIndex(of:)]`.
    public let shards: [Hub]
    public let counters: HubCounters

    public var isReady: Bool { true }

    /// - Parameter executors: one per shard (at least one).
    public init(configuration: HubConfiguration = .init(), executors: [any SerialExecutor]) {
        precondition(!executors.isEmpty, "at least one shard")
        let counters = HubCounters()
        let ids = SubscriberIDs()
        self.counters = counters
        shards = executors.map { Hub(configuration: configuration, executor: $0, counters: counters, subscriberIDs: ids) }
    }

    /// The shard that holds `topic`: FNV-1a of its UTF-8 bytes, so the same name
    /// lands on the same shard in every run.
    public func shardIndex(of topic: String) -> Int {
        guard shards.count > 1 else { return 0 }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in topic.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(shards.count))
    }

    private func shard(of topic: String) -> Hub {
        shards[shardIndex(of: topic)]
    }

    /// One subscriber of `slots`: in the one shard that holds all its topics, that
    /// shard's `subscribe`; across shards, one core joining each shard's tables in turn.
    public func subscribe(topics slots: TopicSlots, channel: Channel,
                          resumeAfter: [UInt64?]?) async throws(SubscribeError) -> Subscription {
        precondition(resumeAfter == nil || resumeAfter?.count == slots.names.count, "one position per topic")
        // The slots each shard holds, shards in the order of their first topic.
        var slotsByShard: [(shard: Int, slots: [Int])] = []
        for (slot, name) in slots.names.enumerated() {
            let index = shardIndex(of: name)
            if let position = slotsByShard.firstIndex(where: { $0.shard == index }) {
                slotsByShard[position].slots.append(slot)
            } else {
                slotsByShard.append((index, [slot]))
            }
        }
        if slotsByShard.count == 1 {
            return await shards[slotsByShard[0].shard].subscribe(topics: slots, channel: channel, resumeAfter: resumeAfter)
        }
        let hubs = slotsByShard.map { shards[$0.shard] }
        let configuration = hubs[0].configuration
        let key = SubscriberKey(slots: slots, channel: channel, id: hubs[0].subscriberIDs.next())
        counters.subscriberJoined(channel)
        let core = SubscriberCore(key: key, mode: slots.queueMode(channel, limit: configuration.eventsQueueLimit),
                                  now: configuration.now(), counters: counters, hubs: hubs)
        var starts = Array(repeating: UInt64(0), count: slots.names.count)
        for (index, hub) in hubs.enumerated() {
            let held = slotsByShard[index].slots
            let positions = await hub.join(core, slots: held, resumeAfter: resumeAfter)
            for (slot, position) in zip(held, positions) { starts[slot] = position }
        }
        // The current values came shard by shard: they go out in parameter order.
        if channel == .state { core.orderPendingBySlot() }
        return Subscription(core: core, startPositions: starts)
    }

    /// In the topic's shard: at once when called on that shard's loop (`Hub.publish`).
    public nonisolated(nonsending) func publish(topic: String, channel: Channel, data: String, event: String?) async throws(PublishError) -> PublishResult {
        try await shard(of: topic).publish(topic: topic, channel: channel, data: data, event: event)
    }

    /// Subscribers of one topic's channel (several-topic ones included).
    public func subscriberCount(topic: String, channel: Channel) async -> Int {
        await shard(of: topic).subscriberCount(topic: topic, channel: channel)
    }

    /// Gauges summed over the shards (a several-topic subscriber counts once, in
    /// the shard of its first topic).
    public func snapshot() async -> HubSnapshot {
        var total = HubSnapshot(topics: 0, stateSubscribers: 0, eventsSubscribers: 0)
        for hub in shards {
            let part = await hub.snapshot()
            total.topics += part.topics
            total.stateSubscribers += part.stateSubscribers
            total.eventsSubscribers += part.eventsSubscribers
        }
        return total
    }

    /// Every shard at once, each on its own loop: one slow shard does not delay the
    /// others' heartbeats. The next is due at the earliest of the shards' answers.
    @discardableResult
    public func sendHeartbeats(idleFor: Duration) async -> ContinuousClock.Instant? {
        await withTaskGroup(of: ContinuousClock.Instant?.self) { group in
            for hub in shards { group.addTask { await hub.sendHeartbeats(idleFor: idleFor) } }
            var next: ContinuousClock.Instant?
            for await shardNext in group {
                if let shardNext { next = min(next ?? shardNext, shardNext) }
            }
            return next
        }
    }

    public func sweep() async {
        await withDiscardingTaskGroup { group in
            for hub in shards { group.addTask { await hub.sweep() } }
        }
    }

    /// Nothing runs in the background of in-memory hubs: returns at once.
    public func run() async {}

    public func shutdown() async {
        for hub in shards { await hub.shutdown() }
    }
}
