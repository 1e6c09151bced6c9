/// The one seam between the HTTP side and where topics live. The gateway's handlers
/// talk to an engine and never learn which one runs: the in-memory `Hub` (the
/// default, one process is the whole system) or the Redis cluster engine (ids,
/// state values and replay windows in Redis, several gateways one system).
///
/// Every engine keeps API.md's promises: ids per topic and channel from 1 without
/// gaps, a subscription live before `subscribe` returns (snapshot → live without a
/// gap or a duplicate), bounded per-subscriber queues, teardown to zero.
public protocol StreamEngine: Sendable {
    /// Lock-free counters for the metrics endpoint.
    var counters: HubCounters { get }

    /// Figures beyond the hub's counters, for `/metrics` (the cluster's Redis link).
    var metrics: [EngineMetric] { get }

    /// Whether the engine can take publishes and new subscriptions now (`/readyz`).
    /// The in-memory hub always can; the cluster engine while Redis answers.
    var isReady: Bool { get }

    /// Why the engine is not ready, in a sentence (`/readyz`'s 503 body); nil when ready.
    var notReadyReason: String? { get }

    /// Whether a new subscription would be served now: `isReady`, but for what refuses
    /// publishes only (a Redis refusing writes, whose subscriptions only read).
    var servesSubscriptions: Bool { get }

    /// Registers one subscriber of `topics`' `channel` (one slot or several) and
    /// queues what it must see first in each (see `Hub.subscribe(topics:channel:resumeAfter:)`):
    /// one subscriber, one queue, live in every topic before this returns.
    /// - Throws: `.unavailable` when the engine cannot vouch for the snapshot now
    ///   (Redis unreachable); nothing is registered then.
    func subscribe(topics: TopicSlots, channel: Channel, resumeAfter: [UInt64?]?) async throws(SubscribeError) -> Subscription

    /// Publishes one value with the topic channel's next id: the one publish entry
    /// (`publishAtOnce` is the same publish, done synchronously where it can be).
    /// Where the engine's work runs is its own concern (the in-memory hub publishes
    /// at once when called on its loop, without a hop). `nonisolated(nonsending)`: the
    /// call itself is not an executor switch (issue 27).
    /// - Throws: `.unavailable` with why, when the value could not be stored (or not
    ///   on as many replicas as asked), `.shutdown` after `shutdown()`.
    nonisolated(nonsending) func publish(topic: String, channel: Channel, data: String, event: String?) async throws(PublishError) -> PublishResult

    /// `publish`, done at once on the calling thread when the engine can do it there (the
    /// in-memory hub, called on its topic's loop): its outcome then, else nil, and then
    /// nothing happened and `publish` must be called. Why a caller tries it first: every
    /// `await` of an engine through this protocol is followed by an executor switch back
    /// to the caller (the compiler emits one after any indirect async call, even a
    /// `nonisolated(nonsending)` one), about 200 instructions of a publish request (issue
    /// 27). Engines that always need to wait (Redis) keep the default, nil.
    func publishAtOnce(topic: String, channel: Channel, data: String, event: String?) -> Result<PublishResult, PublishError>?

    /// Gauges from the engine's tables.
    func snapshot() async -> HubSnapshot

    /// Heartbeats for subscribers silent for `idleFor`; returns when the next one is
    /// due (the earliest silence among the others to reach `idleFor`), nil for none:
    /// the gateway's `Maintenance` calls it again then.
    func sendHeartbeats(idleFor: Duration) async -> ContinuousClock.Instant?

    /// Lets go of what nothing needs any more (called once a second).
    func sweep() async

    /// Runs the engine's own background work (connections, probes) until `shutdown()`.
    func run() async

    /// Finishes every subscriber and stops; later calls are refused. Idempotent.
    func shutdown() async
}

extension StreamEngine {
    /// Never at once: `publish` it is.
    public func publishAtOnce(topic: String, channel: Channel, data: String,
                              event: String?) -> Result<PublishResult, PublishError>? {
        nil
    }
}

/// Why a subscription could not be made.
public enum SubscribeError: Error, Sendable, Equatable {
    /// The engine cannot serve it now (the cluster's Redis is unreachable): answer 503.
    case unavailable
}

/// A figure an engine reports beyond the hub's counters (the cluster engine's Redis
/// link), written to `/metrics` as it is.
public struct EngineMetric: Sendable, Equatable {
    public enum Kind: Sendable { case gauge, counter }
    public let name: String
    public let help: String
    public let kind: Kind
    public let value: UInt64
    /// How a `ShardedEngine` combines its shards' values of this figure.
    public let merge: Merge

    /// A sharded engine's figure from its shards': the smallest (a gauge: the cluster's
    /// `redis_up` is 1 only while every shard's link is), the sum (a counter of what
    /// each shard does on its own), or the largest (a counter of events every shard
    /// sees alike: a failover each loop's link follows).
    public enum Merge: Sendable { case smallest, sum, largest }

    /// - Parameter merge: by default the smallest for a gauge, the sum for a counter.
    public init(name: String, help: String, kind: Kind, value: UInt64, merge: Merge? = nil) {
        self.name = name
        self.help = help
        self.kind = kind
        self.value = value
        self.merge = merge ?? (kind == .gauge ? .smallest : .sum)
    }
}

extension StreamEngine {
    /// A one-topic stream of the topic's own frames: `subscribe(topics: .single(topic)…)`.
    public func subscribe(topic: String, channel: Channel, lastEventID: UInt64?) async throws(SubscribeError) -> Subscription {
        try await subscribe(topics: .single(topic), channel: channel, resumeAfter: [lastEventID])
    }

    /// Figures beyond the hub's counters; none by default.
    public var metrics: [EngineMetric] { [] }

    public var notReadyReason: String? { isReady ? nil : "not ready" }

    public var servesSubscriptions: Bool { isReady }
}
