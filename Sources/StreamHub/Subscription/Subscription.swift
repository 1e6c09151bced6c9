/// One subscriber of one topic's channel, with a single consumer.
///
/// The consumer loops `while let batch = await sub.nextBatch() { … }`. The subscription
/// ends — exactly once, reported to `onFinish` handlers — when the consumer calls
/// `cancel()`, its task is cancelled, the `Subscription` is dropped, an events queue
/// overflows, or the hub shuts down.
public final class Subscription: Sendable {
    public let channel: Channel
    public let topic: String
    private let core: SubscriberCore

    init(core: SubscriberCore) {
        self.channel = core.key.channel
        self.topic = core.key.topic
        self.core = core
    }

    /// Waits until frames are pending and returns all of them, oldest first (one
    /// `writev`), or nil once finished. Cancelling the calling task — before or during
    /// the wait — finishes the subscription with `.cancelled` and returns nil.
    /// Must not be called concurrently with itself.
    public func nextBatch() async -> [[UInt8]]? {
        await core.nextBatch()
    }

    /// Takes the pending frames without waiting, or arranges for `ready` to be called
    /// once when there are some (or the subscription ends) and returns `.pending`:
    /// the way an event loop drains a subscriber without waking a task per frame.
    /// The single consumer uses either this or `nextBatch`, never both at once.
    public func poll(orNotify ready: @escaping @Sendable () -> Void) -> SubscriberPoll {
        core.poll(orNotify: ready)
    }

    /// Ends the subscription with `.cancelled`; later calls do nothing. The hub's
    /// subscriber gauge is exact when this returns; the subscriber leaves the topic
    /// table before the hub's next call.
    public func cancel() {
        core.finish(.cancelled, fromConsumer: true)
    }

    /// Calls `handler` exactly once with the finish reason: right now (on this thread)
    /// if already finished, else from whichever thread finishes the subscription,
    /// never under a lock. Each registered handler is called; keep handlers short.
    public func onFinish(_ handler: @escaping @Sendable (FinishReason) -> Void) {
        core.onFinish(handler)
    }

    /// Why the subscription ended, or nil while it is live.
    public var finishReason: FinishReason? {
        core.finishReason
    }

    /// Frames currently pending (tests look without waiting).
    var pendingCount: Int {
        core.pendingCount
    }

    deinit {
        core.finish(.cancelled, fromConsumer: true)
    }
}
