/// The pure state machine of one subscriber's pending frames. No locks, no
/// continuations resumed, no handlers called: every method returns the action the
/// caller (`SubscriberCore`, holding the lock) must perform after releasing the lock.
///
/// Bounds: on `.latest` (state channel) at most one frame is pending; on
/// `.latestPerSlot` (a tagged state stream) at most one per topic; on
/// `.bounded(limit)` (events) at most `limit` event frames plus one heartbeat, all
/// of a stream's topics counted together.
///
/// A tagged subscriber's queue is `marked`: beside each frame it keeps the
/// frame's `FrameMark` (which topic, which id), so the consumer can write its cursor.
struct SubscriberQueue: Sendable {
    typealias Handler = @Sendable (FinishReason) -> Void

    /// Who is told that frames (or the finish) arrived: a task parked in `nextBatch`,
    /// or a callback registered by `poll` (the event loop's writer, which then takes
    /// the frames without any task waking). Told once, off the lock.
    ///
    /// The continuation is unsafe (frozen) rather than checked: `CheckedContinuation` is
    /// resilient, which left `Waiter` and `State` without a fixed layout, so every switch
    /// on and copy of the state went through the runtime's value witnesses (about a fifth
    /// of the user-space instructions of a delivery by callgrind; issue 27). A waiter is
    /// told exactly once: it is stored only by `park` (else resumed at once by the
    /// caller) and leaves the state only through `takeWaiter` or `finish`.
    enum Waiter: Sendable {
        case task(UnsafeContinuation<Void, Never>)
        case callback(@Sendable () -> Void)

        func resume() {
            switch self {
            case .task(let continuation): continuation.resume()
            case .callback(let ready): ready()
            }
        }
    }

    /// How pushes treat pending frames.
    enum Mode: Sendable, Equatable {
        /// State channel: a push replaces whatever is pending.
        case latest
        /// Events channel: a push appends; a push finding `limit` pending overflows.
        case bounded(limit: Int)
        /// A tagged state stream: a push replaces the pending frame of its
        /// mark's slot (the newest value of each topic wins) and goes last.
        case latestPerSlot
    }

    /// Lifecycle. Invariants: `waiting` ⇒ `pending` is empty; `finished` ⇒ `pending`
    /// and `handlers` are empty. `finished` is terminal.
    enum State: Sendable {
        /// No consumer parked; `pending` may hold frames.
        case idle
        /// The consumer waits (parked in `nextBatch`, or a `poll` callback) until a
        /// frame or the finish arrives.
        case waiting(Waiter)
        /// Ended for the given reason.
        case finished(FinishReason)
    }

    /// What a finish requires once the lock is released: decrement the gauge, wake
    /// the parked consumer (it will see `finished`), call every handler once.
    struct Finish: Sendable {
        let reason: FinishReason
        let waiter: Waiter?
        let handlers: [Handler]
    }

    enum PushAction: Sendable {
        /// Queued; resume `wake` (if any) so the parked consumer takes its batch.
        case queued(wake: Waiter?)
        /// The queue was full: the subscriber is now finished with `.overflow`.
        case overflow(Finish)
        /// Already finished; nothing was queued.
        case dropped
    }

    enum TakeAction: Sendable, Equatable {
        /// Every pending frame, in order; `events` of them are not heartbeats. `marks`
        /// holds each frame's mark on a marked queue, else is empty.
        case batch([[UInt8]], marks: [FrameMark], events: Int)
        /// Nothing pending yet: the consumer must park.
        case empty
        /// Finished: the consumer gets nil.
        case finished
    }

    enum ParkAction: Sendable, Equatable {
        /// The consumer is parked; a push or finish will resume it.
        case parked
        /// Something arrived (or the finish) between take and park: resume at once.
        case resumeNow
    }

    private(set) var mode: Mode
    /// Whether `marks` is kept (a tagged subscriber).
    let marked: Bool
    private(set) var state: State
    /// Frames waiting for the consumer, oldest first.
    private(set) var pending: [[UInt8]] = []
    /// On a marked queue, `marks[i]` is `pending[i]`'s mark; else always empty.
    private(set) var marks: [FrameMark] = []
    /// `pending[0]` is a heartbeat (only ever queued into an empty queue).
    private var heartbeatPending = false
    /// onFinish handlers not yet called.
    private var handlers: [Handler] = []
    /// When a frame or heartbeat was last queued (or the subscription began).
    private var lastActivityTime: QueueTime
    var lastActivity: ContinuousClock.Instant { lastActivityTime.instant }
    /// When the oldest pending value (not a heartbeat) was queued: on `.latest`, the
    /// pending one's; on `.latestPerSlot`, the oldest of those queued since the last
    /// take (an upper bound when one was replaced). Nil when none is pending.
    private(set) var oldestValueTime: QueueTime?
    var oldestValueAt: ContinuousClock.Instant? { oldestValueTime?.instant }

    init(mode: Mode, marked: Bool = false, now: ContinuousClock.Instant) {
        precondition(marked || mode != .latestPerSlot, "latestPerSlot needs marks")
        self.mode = mode
        self.marked = marked
        self.state = .idle
        self.lastActivityTime = QueueTime(now)
    }

    /// A queue that is finished from the start (subscribing to a shut-down hub).
    init(mode: Mode, finished reason: FinishReason, now: ContinuousClock.Instant) {
        self.mode = mode
        self.marked = false
        self.state = .finished(reason)
        self.lastActivityTime = QueueTime(now)
    }

    /// Queues a new subscriber's first frames (a snapshot or a replay, which come on
    /// top of its limit): a `.bounded` queue's limit grows by as many in the same step,
    /// so they always fit, whatever else was queued meanwhile. Returns how many were
    /// queued (none once finished) and the waiter to resume, if one was parked.
    mutating func pushFirst(_ frames: [([UInt8], FrameMark?)], now: ContinuousClock.Instant) -> (queued: Int, wake: Waiter?) {
        guard finishReason == nil, !frames.isEmpty else { return (0, nil) }
        if case .bounded(let limit) = mode { mode = .bounded(limit: limit + frames.count) }
        var queued = 0
        var wake: Waiter?
        for (frame, mark) in frames {
            guard case .queued(let waiter) = push(frame, mark: mark, now: now) else { continue }
            queued += 1
            wake = wake ?? waiter
        }
        return (queued, wake)
    }

    /// Puts the pending frames of a marked queue in slot order, each slot's own order
    /// kept (a several-topic `/state` stream whose first values came from several
    /// shards: they go out in parameter order). Before the consumer took anything.
    mutating func orderPendingBySlot() {
        guard marked, pending.count > 1 else { return }
        let order = marks.indices.sorted { marks[$0].slot != marks[$1].slot ? marks[$0].slot < marks[$1].slot : $0 < $1 }
        pending = order.map { pending[$0] }
        marks = order.map { marks[$0] }
    }

    var finishReason: FinishReason? {
        if case .finished(let reason) = state { reason } else { nil }
    }

    /// Event frames pending (a pending heartbeat is not counted).
    var pendingEvents: Int { pending.count - (heartbeatPending ? 1 : 0) }

    /// Queues `frame`; a marked queue needs its `mark`, an unmarked one ignores it.
    mutating func push(_ frame: [UInt8], mark: FrameMark? = nil, now: ContinuousClock.Instant) -> PushAction {
        switch state {
        case .finished:
            return .dropped
        case .idle, .waiting:
            switch mode {
            case .latest:
                pending.removeAll(keepingCapacity: true)
                marks.removeAll(keepingCapacity: true)
                heartbeatPending = false
                oldestValueTime = nil
            case .bounded(let limit):
                if pendingEvents >= limit {
                    // finish() only returns nil when already finished, excluded above.
                    return .overflow(finish(.overflow)!)
                }
            case .latestPerSlot:
                guard let mark else { preconditionFailure("a marked queue needs a mark") }
                if let index = marks.firstIndex(where: { $0.slot == mark.slot }) {
                    pending.remove(at: index)
                    marks.remove(at: index)
                }
            }
            if marked {
                guard let mark else { preconditionFailure("a marked queue needs a mark") }
                marks.append(mark)
            }
            pending.append(frame)
            lastActivityTime = QueueTime(now)
            if oldestValueTime == nil { oldestValueTime = QueueTime(now) }
            return .queued(wake: takeWaiter())
        }
    }

    /// When this subscriber's silence reaches `idleFor` (its heartbeat is due then),
    /// if nothing is pending; nil when finished or frames wait to be written.
    func silenceEnds(idleFor: Duration) -> ContinuousClock.Instant? {
        if case .finished = state { return nil }
        return pending.isEmpty ? lastActivity + idleFor : nil
    }

    /// Queues a heartbeat if nothing is pending and nothing was queued for `idleFor`
    /// (an idleness of exactly `idleFor` qualifies). Returns nil when none was queued.
    mutating func heartbeat(now: ContinuousClock.Instant, idleFor: Duration) -> PushAction? {
        if case .finished = state { return nil }
        guard pending.isEmpty, now - lastActivity >= idleFor else { return nil }
        pending.append(SSEEncoder.heartbeat)
        if marked { marks.append(.none) }
        heartbeatPending = true
        lastActivityTime = QueueTime(now)
        return .queued(wake: takeWaiter())
    }

    mutating func take() -> TakeAction {
        switch state {
        case .finished:
            return .finished
        case .waiting:
            preconditionFailure("Subscription.nextBatch called concurrently: a subscription has a single consumer")
        case .idle:
            guard !pending.isEmpty else { return .empty }
            let events = pendingEvents
            let batch = pending
            let batchMarks = marks
            pending = []
            marks = []
            heartbeatPending = false
            oldestValueTime = nil
            return .batch(batch, marks: batchMarks, events: events)
        }
    }

    /// `take`, and when nothing is pending, parks `waiter` in the same step (what
    /// `poll` does: nothing can arrive between the two). A callback parked by an
    /// earlier `poll` that has not fired is replaced (a parked task is not: that is
    /// a second consumer).
    mutating func takeOrPark(_ waiter: Waiter) -> TakeAction {
        if case .waiting(.callback) = state { state = .idle }
        let action = take()
        if action == .empty {
            // take() returned .empty only in .idle with nothing pending.
            state = .waiting(waiter)
        }
        return action
    }

    mutating func park(_ waiter: Waiter) -> ParkAction {
        switch state {
        case .finished:
            return .resumeNow
        case .waiting:
            preconditionFailure("Subscription.nextBatch called concurrently: a subscription has a single consumer")
        case .idle:
            guard pending.isEmpty else { return .resumeNow }
            state = .waiting(waiter)
            return .parked
        }
    }

    /// Ends the subscription; nil if it had already ended (finishing is idempotent).
    mutating func finish(_ reason: FinishReason) -> Finish? {
        let waiter: Waiter?
        switch state {
        case .finished: return nil
        case .idle: waiter = nil
        case .waiting(let parked): waiter = parked
        }
        let finish = Finish(reason: reason, waiter: waiter, handlers: handlers)
        state = .finished(reason)
        pending = []
        marks = []
        heartbeatPending = false
        oldestValueTime = nil
        handlers = []
        return finish
    }

    /// Registers `handler`; returns the reason to call it with now if already finished.
    mutating func onFinish(_ handler: @escaping Handler) -> FinishReason? {
        if case .finished(let reason) = state { return reason }
        handlers.append(handler)
        return nil
    }

    private mutating func takeWaiter() -> Waiter? {
        guard case .waiting(let waiter) = state else { return nil }
        state = .idle
        return waiter
    }
}
