/// The pub/sub core: topics, their two channels, ids, replay windows and subscribers.
/// Knows nothing of sockets.
///
/// One actor serializes registration and publishing, so a subscribe and a concurrent
/// publish are ordered: the value is either the first the subscriber gets or comes
/// after it, never missed and never twice. Each frame is encoded once per publish and
/// the same buffer is queued to every subscriber and held in the replay window.
///
/// Memory is bounded by the configuration: per topic one state frame and
/// `replayCount` events; per subscriber one state frame or `eventsQueueLimit` events.
public actor Hub: StreamEngine {
    let configuration: HubConfiguration
    /// Where the hub's work runs: the executor it was given (the gateway gives
    /// its event loop, where the connections that publish and subscribe run,
    /// so reaching the hub costs no thread hop), or a serial queue of its own.
    private nonisolated let executor: any SerialExecutor
    /// Lock-free counters, readable without an actor hop.
    public nonisolated let counters: HubCounters
    /// Keys of subscribers finished by their consumers, waiting to leave `topics`.
    let inbox = RemovalInbox()
    var topics: [String: Topic] = [:]
    /// The last events ids of topics forgotten (`forgetIfIdle`): a topic used again goes on from them.
    var forgotten: ForgottenTopics
    /// Where subscriber ids come from (shared by the shards of a `ShardedHub`).
    package nonisolated let subscriberIDs: SubscriberIDs
    var isShutdown = false

    /// The in-memory hub can always take publishes and subscriptions.
    public nonisolated var isReady: Bool { true }

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        executor.asUnownedSerialExecutor()
    }

    public init(configuration: HubConfiguration = .init(), executor: (any SerialExecutor)? = nil) {
        self.init(configuration: configuration, executor: executor, counters: HubCounters(), subscriberIDs: SubscriberIDs())
    }

    /// A hub sharing its counters and subscriber ids with others (a `ShardedEngine`'s shards:
    /// hubs, or cluster engines' mirrors).
    package init(configuration: HubConfiguration, executor: (any SerialExecutor)?, counters: HubCounters,
         subscriberIDs: SubscriberIDs) {
        precondition(configuration.eventsQueueLimit >= 1, "eventsQueueLimit must be at least 1")
        precondition(configuration.replayCount >= 0, "replayCount must not be negative")
        precondition(configuration.replayMaxAge >= .zero, "replayMaxAge must not be negative")
        self.configuration = configuration
        forgotten = ForgottenTopics(capacity: configuration.forgottenTopicsRemembered)
        self.counters = counters
        self.subscriberIDs = subscriberIDs
        self.executor = executor ?? QueueExecutor(label: "streams.hub")
    }

    deinit {
        // A hub dropped without shutdown() must not leave consumers parked forever.
        for topic in topics.values {
            for core in topic.allSubscribers {
                core.finish(.shutdown, fromConsumer: false)
            }
        }
    }

    // MARK: - Publishing

    /// Publishes `data` with the next id of the topic's channel (last + 1, from 1).
    ///
    /// Wherever the caller runs: at once on the calling thread when that is the hub's
    /// executor's (`publishAtOnce`: the event loop's does isolate its thread, where
    /// nothing of the hub can be running at the same time), which saves a publish
    /// request two job trips through the loop; else on the hub's executor.
    public nonisolated(nonsending) func publish(topic: String, channel: Channel, data: String,
                                    event: String? = nil) async throws(PublishError) -> PublishResult {
        if let inPlace = publishAtOnce(topic: topic, channel: channel, data: data, event: event) {
            return try inPlace.get()
        }
        return try await publishOnExecutor(topic: topic, channel: channel, data: data, event: event)
    }

    /// `publish` after the hop to the hub's executor. A method of its own so that no
    /// `ContinuousClock.Instant` (the `at:` default below) is in `publish`'s async frame:
    /// the type is resilient, and there each was a task allocation at every call, the
    /// usual in-place one included (3 a publish request, issue 27).
    private func publishOnExecutor(topic: String, channel: Channel, data: String,
                                   event: String?) throws(PublishError) -> PublishResult {
        try publish(topic: topic, channel: channel, data: data, event: event, assignedID: nil)
    }

    /// `publish` run synchronously when the caller is on the hub's executor's thread;
    /// nil elsewhere (then it must hop).
    public nonisolated func publishAtOnce(topic: String, channel: Channel, data: String,
                                          event: String?) -> Result<PublishResult, PublishError>? {
        runInPlace(isolatedBy: executor, (topic, channel, data, event)) { hub, value in
            // Not `Result { … }`: a closure isolated to the hub passed to it gets the
            // runtime's isolation check at its entry (one more executor question).
            do throws(PublishError) {
                return .success(try hub.publish(topic: value.0, channel: value.1, data: value.2, event: value.3,
                                                assignedID: nil))
            } catch {
                return .failure(error)
            }
        }
    }

    /// A publish with an id the caller chose (the id rules' tests; a cluster applies
    /// values stored elsewhere with `apply`). It must be greater than the
    /// topic/channel's last id (else `.staleID(last:)`, nothing changes); ids may skip.
    public func publish(topic: String, channel: Channel, data: String, event: String?, id: UInt64) throws(PublishError) -> PublishResult {
        try publish(topic: topic, channel: channel, data: data, event: event, assignedID: id)
    }

    private func publish(topic name: String, channel: Channel, data: String, event: String?,
                         assignedID: UInt64?, at instant: ContinuousClock.Instant? = nil,
                         counted: Bool = true) throws(PublishError) -> PublishResult {
        drainRemovals()
        guard !isShutdown else { throw .shutdown }
        let last = channel == .events ? lastEventsID(of: name) : topics[name]?.stateLastID ?? 0
        let id = assignedID ?? (last &+ 1)  // Wrapping to 0 at UInt64.max is then stale.
        guard id > last else { throw .staleID(last: last) }
        let now = instant ?? configuration.now()
        let frame = SSEEncoder.event(id: id, event: event, data: data)
        if counted { counters.published(channel) }
        let delivery = withTopic(name) { topic in
            topic.record(id: id, frame: frame, channel: channel, now: now)
            // Encoded once for every tagged subscriber, only when there is one.
            return deliver(frame, on: channel, of: &topic, now: now) {
                (TopicFrameEncoder.event(topic: name, id: id, event: event, data: data), id)
            }
        }
        finishDelivery(delivery, to: name, on: channel, now: now)
        return PublishResult(id: id, subscribers: delivery.queued)
    }

    // MARK: - The cluster seam (an engine that keeps ids and values elsewhere)

    /// Applies a value stored elsewhere (a cluster's Redis) with its id, as received
    /// `at` (its age counts from then in the replay window): like `publish(…id:)`,
    /// but not counted as a publish here (the engine that stored it counted it).
    /// - Throws: `.staleID` when `id` is not past the channel's last id (nothing changes).
    @discardableResult
    public func apply(topic: String, channel: Channel, data: String, event: String?, id: UInt64,
                      at instant: ContinuousClock.Instant? = nil) throws(PublishError) -> PublishResult {
        try publish(topic: topic, channel: channel, data: data, event: event, assignedID: id,
                    at: instant, counted: false)
    }

    /// Moves the topic's events past ids that are gone before this hub had them
    /// (`after` < ids ≤ `through`): its live events subscribers get `gap(after + 1)`,
    /// and a later resume from before `through` gets a `gap` too. Nothing happens
    /// when the channel is already at or past `through`.
    public func skipEvents(topic name: String, after: UInt64, through: UInt64) {
        drainRemovals()
        guard !isShutdown, through > lastEventsID(of: name) else { return }
        let now = configuration.now()
        let frame = SSEEncoder.gap(firstMissingID: after + 1)
        let delivery = withTopic(name) { topic in
            topic.skipEvents(through: through)
            return deliver(frame, on: .events, of: &topic, now: now) {
                (TopicFrameEncoder.gap(topic: name, firstMissingID: after + 1), 0)
            }
        }
        finishDelivery(delivery, to: name, on: .events, now: now)
        counters.gapQueued(delivery.queued)
    }

    /// The last ids the hub holds for `topic` (0 where none).
    public func lastIDs(topic name: String) -> (state: UInt64, events: UInt64) {
        (topics[name]?.stateLastID ?? 0, lastEventsID(of: name))
    }

    /// The topic's last events id: its own, or the one it had when it was forgotten (0: none).
    private func lastEventsID(of name: String) -> UInt64 {
        topics[name]?.eventsLastID ?? forgotten.lastEventsID(of: name) ?? 0
    }

    /// Forgets the topic (value, window, ids) if nobody subscribes to it here;
    /// returns whether it is gone. An engine that mirrors topics from elsewhere
    /// calls it when it stops following one, so no stale copy stays behind.
    @discardableResult
    public func forgetUnsubscribed(topic name: String) -> Bool {
        drainRemovals()
        guard let topic = topics[name] else { return true }
        guard !topic.hasSubscribers else { return false }
        topics[name] = nil
        return true
    }

    /// Subscribers of one topic's channel here (several-topic ones included).
    public func subscriberCount(topic name: String, channel: Channel) -> Int {
        drainRemovals()
        return topics[name]?.reachCount(channel) ?? 0
    }

    /// Subscribers per topic, for topics that have any.
    public func subscriberCounts() -> [String: (state: Int, events: Int)] {
        drainRemovals()
        var counts: [String: (state: Int, events: Int)] = [:]
        for (name, topic) in topics where topic.hasSubscribers {
            counts[name] = (topic.reachCount(.state), topic.reachCount(.events))
        }
        return counts
    }

    /// Nothing runs in the background of an in-memory hub: returns at once.
    public nonisolated func run() async {}

    // MARK: - Maintenance

    /// Queues `SSEEncoder.heartbeat` to every subscriber whose queue is empty and that
    /// was queued nothing (frame or heartbeat) for at least `idleFor`; returns when
    /// the earliest silence among the others with an empty queue reaches `idleFor`
    /// (nil: none), the moment the next heartbeat is due.
    @discardableResult
    public func sendHeartbeats(idleFor: Duration) -> ContinuousClock.Instant? {
        drainRemovals()
        let now = configuration.now()
        var next: ContinuousClock.Instant?
        for topic in topics.values {
            // A several-topic subscriber once, from its first topic's table.
            for channel in [Channel.state, .events] {
                for entry in topic.subscribers(channel).values where entry.slot == 0 {
                    let (action, silenceEnds) = entry.core.heartbeat(now: now, idleFor: idleFor)
                    if case .queued(let wake) = action { wake?.resume() }
                    if let silenceEnds, silenceEnds > now { next = min(next ?? silenceEnds, silenceEnds) }
                }
            }
        }
        return next
    }

    /// Forgets topics holding nothing worth keeping: no subscribers, no state value,
    /// and no event left in the window after pruning by age.
    public func sweep() {
        drainRemovals()
        let now = configuration.now()
        for name in Array(topics.keys) {
            forgetIfIdle(name, now: now)
        }
    }

    /// Finishes every subscriber with `.shutdown` and forgets every topic. Afterwards
    /// `subscribe` returns finished subscriptions and `publish` throws `.shutdown`.
    /// Calling it twice is harmless.
    public func shutdown() {
        guard !isShutdown else { return }
        isShutdown = true
        finishAll(.shutdown)
    }

    /// Gauges from the tables (consumer-side removals applied first).
    public func snapshot() -> HubSnapshot {
        drainRemovals()
        var snapshot = HubSnapshot(topics: topics.count, stateSubscribers: 0, eventsSubscribers: 0)
        for topic in topics.values {
            snapshot.stateSubscribers += topic.ownCount(.state)
            snapshot.eventsSubscribers += topic.ownCount(.events)
        }
        return snapshot
    }

    // MARK: - Internals

    /// Takes subscribers finished by their consumers out of the tables, and forgets
    /// the topics that leaves with nothing worth keeping.
    func drainRemovals() {
        let keys = inbox.take()
        guard !keys.isEmpty else { return }
        let now = configuration.now()
        for key in keys {
            removeEverywhere(key, now: now)
        }
    }

    /// Forgets the topic if it holds nothing worth keeping (its last events id is kept in
    /// `forgotten`: used again, it goes on from there).
    func forgetIfIdle(_ name: String, now: ContinuousClock.Instant) {
        guard configuration.forgetsIdleTopics else {
            topics[name]?.pruneWindow(now: now)
            return
        }
        if topics[name]?.isWorthKeeping(now: now) == false {
            counters.forgottenTopicsLetGo(forgotten.note(name, lastEventsID: topics[name]!.eventsLastID))
            topics[name] = nil
        }
    }

    /// Runs `body` on the named topic in place, creating it on first use (going on from
    /// its last events id if it was forgotten: the ids before it count as gone).
    func withTopic<R>(_ name: String, _ body: (inout Topic) -> R) -> R {
        body(&topics[name, default: newTopic(name)])
    }

    private func newTopic(_ name: String) -> Topic {
        var topic = Topic(configuration: configuration)
        if let lastEventsID = forgotten.lastEventsID(of: name) { topic.skipEvents(through: lastEventsID) }
        return topic
    }

    private func finishAll(_ reason: FinishReason) {
        let all = topics.values.flatMap(\.allSubscribers)
        topics = [:]
        _ = inbox.take()
        for core in all {
            core.finish(reason, fromConsumer: false)
        }
    }
}

extension Hub {
    /// Subscribers in the tables, without applying pending removals first (tests watch
    /// the removal hop complete on its own).
    func registeredSubscribers() -> Int {
        topics.values.reduce(0) { $0 + $1.ownCount(.state) + $1.ownCount(.events) }
    }

    /// Events the topic's replay window holds, without pruning first (tests watch the sweep prune).
    func heldEvents(topic name: String) -> Int {
        topics[name]?.window.count ?? 0
    }
}
