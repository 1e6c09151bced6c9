/// An engine spread over several shards, each on its own serial executor: the
/// gateway gives each of its event loops one, so with `--loops N` the topics' work
/// runs on N threads. In memory each shard is a `Hub` (`ShardedHub`); on Redis each
/// is a cluster engine with its own links and mirror hub, so a topic's mirror, its
/// pub/sub messages, fences and syncs all live on its shard's loop. A topic lives in
/// exactly one shard, chosen by a stable hash of its name, and every promise of the
/// shard holds per topic unchanged: ids, snapshot → live, order, replay, bounded
/// queues, teardown to zero.
///
/// Shared by the shards: the counters (so `/metrics` reads one set) and the
/// subscriber ids. A several-topic stream whose topics live in several shards is
/// still one subscriber with one queue: every shard readies its topics first, all at
/// once (`EngineShard.prepareJoin`: the cluster follows and fences them), then the core
/// joins each shard's tables in turn (each join one actor call, so each topic's
/// snapshot → live holds), and however it finishes, every shard that holds it is
/// told (`SubscriberCore`'s homes).
public final class ShardedEngine<Shard: EngineShard>: StreamEngine {
    /// The shards, in executor order; a topic's is `shards[shardIndex(of:)]`.
    public let shards: [Shard]
    public let counters: HubCounters

    /// - Precondition: at least one shard, and all share their tables' counters and
    ///   subscriber ids.
    package init(shards: [Shard]) {
        precondition(!shards.isEmpty, "at least one shard")
        let first = shards[0].tables
        precondition(shards.allSatisfy { $0.tables.counters === first.counters && $0.tables.subscriberIDs === first.subscriberIDs },
                     "the shards share their counters and subscriber ids")
        self.shards = shards
        counters = first.counters
    }

    /// Ready while every shard is.
    public var isReady: Bool { shards.allSatisfy(\.isReady) }

    public var servesSubscriptions: Bool { shards.allSatisfy(\.servesSubscriptions) }

    /// The first shard's reason, in shard order.
    public var notReadyReason: String? {
        for shard in shards {
            if let reason = shard.notReadyReason { return reason }
        }
        return nil
    }

    /// The shards' figures merged by name, each as its `merge` says.
    public var metrics: [EngineMetric] {
        var merged = shards[0].metrics
        for shard in shards.dropFirst() {
            for metric in shard.metrics {
                guard let index = merged.firstIndex(where: { $0.name == metric.name }) else {
                    merged.append(metric)
                    continue
                }
                let (old, new) = (merged[index].value, metric.value)
                let value = switch metric.merge {
                case .smallest: min(old, new)
                case .sum: old + new
                case .largest: max(old, new)
                }
                merged[index] = EngineMetric(name: metric.name, help: metric.help, kind: metric.kind, value: value,
                                             merge: metric.merge)
            }
        }
        return merged
    }

    /// The shard that holds `topic`: FNV-1a of its UTF-8 bytes, so the same name
    /// lands on the same shard in every run.
    public func shardIndex(of topic: String) -> Int {
        guard shards.count > 1 else { return 0 }
        // Over the string's own bytes where it has them (a native string always does):
        // iterating `String.UTF8View` cost about 35 instructions a byte, 540 a publish
        // request with two loops (issue 27).
        let hash = topic.utf8.withContiguousStorageIfAvailable { Self.fnv1a($0) }
            ?? Array(topic.utf8).withUnsafeBufferPointer { Self.fnv1a($0) }
        return Int(hash % UInt64(shards.count))
    }

    private static func fnv1a(_ bytes: UnsafeBufferPointer<UInt8>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    private func shard(of topic: String) -> Shard {
        shards[shardIndex(of: topic)]
    }

    /// One subscriber of `slots`: in the one shard that holds all its topics, that
    /// shard's `subscribe`; across shards, every shard readies its topics, then one
    /// core joins each shard's tables in turn.
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
            return try await shards[slotsByShard[0].shard].subscribe(topics: slots, channel: channel, resumeAfter: resumeAfter)
        }
        let owners = slotsByShard.map { shards[$0.shard] }
        let topics = slotsByShard.map { $0.slots.map { slots.names[$0] } }
        // Every shard readies its topics before any registers the subscriber, all at once
        // (a stream waits for the slowest, not for their sum); a refusal then leaves
        // nothing registered anywhere.
        guard owners.allSatisfy(\.servesSubscriptions) else { throw .unavailable }
        let prepared = await withTaskGroup(of: (Int, Bool).self, returning: [Bool].self) { group in
            for (index, owner) in owners.enumerated() {
                let positions = resumeAfter.map { positions in slotsByShard[index].slots.map { positions[$0] } }
                group.addTask {
                    do throws(SubscribeError) {
                        try await owner.prepareJoin(topics: topics[index], channel: channel, resumeAfter: positions)
                        return (index, true)
                    } catch {
                        return (index, false)
                    }
                }
            }
            var prepared = Array(repeating: false, count: owners.count)
            for await (index, ok) in group { prepared[index] = ok }
            return prepared
        }
        guard prepared.allSatisfy({ $0 }) else {
            for (index, owner) in owners.enumerated() where prepared[index] { await owner.endJoin(topics: topics[index]) }
            throw .unavailable
        }
        let hubs = owners.map(\.tables)
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
        for (index, owner) in owners.enumerated() { await owner.endJoin(topics: topics[index]) }
        // The current values came shard by shard: they go out in parameter order.
        if channel == .state { core.orderPendingBySlot() }
        return Subscription(core: core, startPositions: starts)
    }

    /// In the topic's shard: at once when called on that shard's loop (`Hub.publish`).
    public nonisolated(nonsending) func publish(topic: String, channel: Channel, data: String, event: String?) async throws(PublishError) -> PublishResult {
        try await shard(of: topic).publish(topic: topic, channel: channel, data: data, event: event)
    }

    /// In the topic's shard, when that one can publish at once here (a hub called on its loop).
    public func publishAtOnce(topic: String, channel: Channel, data: String,
                              event: String?) -> Result<PublishResult, PublishError>? {
        shard(of: topic).publishAtOnce(topic: topic, channel: channel, data: data, event: event)
    }

    /// Subscribers of one topic's channel (several-topic ones included).
    public func subscriberCount(topic: String, channel: Channel) async -> Int {
        await shard(of: topic).subscriberCount(topic: topic, channel: channel)
    }

    /// Gauges summed over the shards (a several-topic subscriber counts once, in
    /// the shard of its first topic).
    public func snapshot() async -> HubSnapshot {
        var total = HubSnapshot(topics: 0, stateSubscribers: 0, eventsSubscribers: 0)
        for shard in shards {
            let part = await shard.snapshot()
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
            for shard in shards { group.addTask { await shard.sendHeartbeats(idleFor: idleFor) } }
            var next: ContinuousClock.Instant?
            for await shardNext in group {
                if let shardNext { next = min(next ?? shardNext, shardNext) }
            }
            return next
        }
    }

    public func sweep() async {
        await withDiscardingTaskGroup { group in
            for shard in shards { group.addTask { await shard.sweep() } }
        }
    }

    /// Every shard's background work at once, until they all shut down (in-memory
    /// hubs have none: at once).
    public func run() async {
        await withDiscardingTaskGroup { group in
            for shard in shards { group.addTask { await shard.run() } }
        }
    }

    /// Every shard at once: each one's own last words to Redis do not wait for another's.
    public func shutdown() async {
        await withDiscardingTaskGroup { group in
            for shard in shards { group.addTask { await shard.shutdown() } }
        }
    }
}

/// The in-memory engine over one `Hub` per event loop.
public typealias ShardedHub = ShardedEngine<Hub>

extension ShardedEngine where Shard == Hub {
    /// - Parameter executors: one per shard (at least one).
    public convenience init(configuration: HubConfiguration = .init(), executors: [any SerialExecutor]) {
        precondition(!executors.isEmpty, "at least one shard")
        let counters = HubCounters()
        let ids = SubscriberIDs()
        self.init(shards: executors.map { Hub(configuration: configuration, executor: $0, counters: counters, subscriberIDs: ids) })
    }
}
