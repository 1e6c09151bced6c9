import Locking

/// The storage of one subscriber: its lock-guarded `SubscriberQueue`, shared by the
/// hub (which pushes) and the `Subscription` facade (which consumes). The hub's
/// tables hold cores, never facades, so dropping the facade finishes the subscriber.
///
/// Nothing here resumes a continuation or calls a handler while holding the lock.
final class SubscriberCore: Sendable {
    let key: SubscriberKey
    private let queue: Locked<SubscriberQueue>
    private let counters: HubCounters
    /// The hub whose tables hold the subscriber, where a consumer-side finish posts
    /// the key; nil for a born-finished subscriber.
    private let home: Home?
    /// The other hubs whose tables hold this subscriber: a several-topic stream whose
    /// topics live in several shards of a `ShardedHub`. Empty (no allocation) otherwise.
    private let moreHomes: [Home]

    /// A hub whose tables hold the subscriber, and its removal inbox. Weak: the
    /// hub owns its cores, not the reverse.
    struct Home: Sendable {
        let inbox: RemovalInbox
        weak let hub: Hub?

        init(_ hub: Hub) {
            inbox = hub.inbox
            self.hub = hub
        }

        /// Asks the hub to take `key` out of its tables.
        func postRemoval(_ key: SubscriberKey) {
            if inbox.post(key) {
                Task { [weak hub] in await hub?.drainRemovals() }
            }
        }
    }

    init(key: SubscriberKey, mode: SubscriberQueue.Mode, now: ContinuousClock.Instant,
         counters: HubCounters, hub: Hub) {
        self.key = key
        self.queue = Locked(SubscriberQueue(mode: mode, marked: key.slots.isMarked, now: now))
        self.counters = counters
        self.home = Home(hub)
        self.moreHomes = []
    }

    /// A subscriber held by every one of `hubs` (at least two: the shards of a
    /// several-topic stream). However it finishes, every one of them is told.
    init(key: SubscriberKey, mode: SubscriberQueue.Mode, now: ContinuousClock.Instant,
         counters: HubCounters, hubs: [Hub]) {
        precondition(hubs.count >= 2, "a subscriber of one hub takes the other init")
        self.key = key
        self.queue = Locked(SubscriberQueue(mode: mode, marked: key.slots.isMarked, now: now))
        self.counters = counters
        self.home = Home(hubs[0])
        self.moreHomes = hubs.dropFirst().map(Home.init)
    }

    /// A subscriber finished from birth (the hub is shut down); never counted live.
    init(key: SubscriberKey, finished reason: FinishReason, now: ContinuousClock.Instant,
         counters: HubCounters) {
        self.key = key
        self.queue = Locked(SubscriberQueue(mode: .latest, finished: reason, now: now))
        self.counters = counters
        self.home = nil
        self.moreHomes = []
    }

    var finishReason: FinishReason? { queue.withLock { $0.finishReason } }

    var pendingCount: Int { queue.withLock { $0.pending.count } }

    // MARK: Producer side (the hub actor)

    func push(_ frame: [UInt8], mark: FrameMark? = nil, now: ContinuousClock.Instant) -> SubscriberQueue.PushAction {
        queue.withLock { $0.push(frame, mark: mark, now: now) }
    }

    /// Queues a heartbeat if one is due (`SubscriberQueue.heartbeat`), and says when
    /// the next one will be (`SubscriberQueue.silenceEnds`), in one lock.
    func heartbeat(now: ContinuousClock.Instant,
                   idleFor: Duration) -> (action: SubscriberQueue.PushAction?, silenceEnds: ContinuousClock.Instant?) {
        queue.withLock { queue in
            let action = queue.heartbeat(now: now, idleFor: idleFor)
            return (action, queue.silenceEnds(idleFor: idleFor))
        }
    }

    /// Queues a new subscriber's first frames on top of its limit (`SubscriberQueue.pushFirst`);
    /// returns how many were queued.
    func pushFirst(_ frames: [([UInt8], FrameMark?)], now: ContinuousClock.Instant) -> Int {
        let (queued, wake) = queue.withLock { $0.pushFirst(frames, now: now) }
        wake?.resume()
        return queued
    }

    /// See `SubscriberQueue.orderPendingBySlot`.
    func orderPendingBySlot() {
        queue.withLock { $0.orderPendingBySlot() }
    }

    // MARK: Consumer side

    /// Waits for frames; returns all pending ones with each one's mark on a marked
    /// queue (else `marks` is empty), or nil once finished. A cancelled task finishes
    /// the subscriber with `.cancelled` (also if cancelled before it parks).
    func nextMarkedBatch() async -> (frames: [[UInt8]], marks: [FrameMark])? {
        if Task.isCancelled {
            finish(.cancelled, fromConsumer: true)
            return nil
        }
        // Runs at most twice: a park is only resumed by a push (pending is then
        // non-empty, and only this single consumer takes) or by the finish.
        while true {
            switch queue.withLock({ $0.take() }) {
            case .batch(let frames, let marks, let events):
                counters.delivered(key.channel, frames: events)
                return (frames, marks)
            case .finished:
                return nil
            case .empty:
                break
            }
            await withTaskCancellationHandler {
                await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                    if queue.withLock({ $0.park(.task(continuation)) }) == .resumeNow {
                        continuation.resume()
                    }
                }
            } onCancel: {
                finish(.cancelled, fromConsumer: true)
            }
        }
    }

    /// Takes every pending frame without waiting; when none is pending, arranges for
    /// `ready` to be called once (off the lock, on the thread that queues the next
    /// frame or finishes the subscriber) and returns `.pending`. The single consumer
    /// calls it again after `ready`; it must not have a `nextBatch` in progress.
    func poll(orNotify ready: @escaping @Sendable () -> Void) -> SubscriberPoll {
        let (action, oldest) = queue.withLock { queue in
            let oldest = queue.oldestValueTime
            return (queue.takeOrPark(.callback(ready)), oldest)
        }
        switch action {
        case .batch(let frames, let marks, let events):
            counters.delivered(key.channel, frames: events)
            return .frames(frames, marks: marks, values: events, oldestValueAt: oldest)
        case .empty:
            return .pending
        case .finished:
            return .finished
        }
    }

    func onFinish(_ handler: @escaping SubscriberQueue.Handler) {
        if let reason = queue.withLock({ $0.onFinish(handler) }) {
            handler(reason)
        }
    }

    // MARK: Finishing

    /// Finishes the subscriber (idempotent). From the consumer's side the hub is told
    /// to drop it from its tables; the hub itself removes the ones it finishes.
    func finish(_ reason: FinishReason, fromConsumer: Bool) {
        guard let finish = queue.withLock({ $0.finish(reason) }) else { return }
        complete(finish)
        // complete() has told every hub of a subscriber that several hold.
        if fromConsumer, moreHomes.isEmpty { home?.postRemoval(key) }
    }

    /// Carries out a finish decided under the lock: the gauge drops first (so it is
    /// exact when `cancel()` returns), then the consumer wakes, then handlers run.
    func complete(_ finish: SubscriberQueue.Finish) {
        counters.subscriberLeft(key.channel)
        finish.waiter?.resume()
        for handler in finish.handlers {
            handler(finish.reason)
        }
        // Held by several hubs: each takes it out of its own tables (the one that
        // finished it already did; taking it out twice is harmless).
        if !moreHomes.isEmpty {
            home?.postRemoval(key)
            for home in moreHomes { home.postRemoval(key) }
        }
    }
}
