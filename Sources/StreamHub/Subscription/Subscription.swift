/// One subscriber of one channel of a set of topic slots (`TopicSlots`), with a
/// single consumer: one `SubscriberCore` and one bounded queue that every one of its
/// topics feeds, whether it follows one topic or 32.
///
/// A `.tagged` stream's frames are the shared JSON frames of `TopicFrameEncoder`,
/// each with its `FrameMark`; its cursor is the consumer's: it starts at
/// `startPositions` and moves to a mark's id when the consumer writes that frame.
/// A `.plain` stream's frames are the topic's own and carry no marks.
///
/// The consumer loops `while let batch = await sub.nextBatch() { … }`. The subscription
/// ends — exactly once, reported to `onFinish` handlers — when the consumer calls
/// `cancel()`, its task is cancelled, the `Subscription` is dropped, the queue
/// overflows, or the engine shuts down; it then leaves every topic's table at once.
public final class Subscription: Sendable {
    public let channel: Channel
    /// The slots, in parameter order (a mark's slot indexes `slots.names`).
    public let slots: TopicSlots
    /// Where the stream starts in each slot: the position it resumed from, else the
    /// topic's last id on the channel when the subscription began (0 for none).
    public let startPositions: [UInt64]
    private let core: SubscriberCore

    init(core: SubscriberCore, startPositions: [UInt64]) {
        self.channel = core.key.channel
        self.slots = core.key.slots
        self.startPositions = startPositions
        self.core = core
    }

    /// The topics, in slot order.
    public var topics: [String] { slots.names }

    /// The first (for a `.plain` stream, the only) topic.
    public var topic: String { slots.names[0] }

    /// Waits until frames are pending and returns all of them, oldest first (one
    /// `writev`), or nil once finished. Cancelling the calling task — before or during
    /// the wait — finishes the subscription with `.cancelled` and returns nil.
    /// Must not be called concurrently with itself.
    public func nextBatch() async -> [[UInt8]]? {
        await core.nextMarkedBatch()?.frames
    }

    /// `nextBatch` with each frame's mark (`marks[i]` is `frames[i]`'s; empty on a
    /// `.plain` stream).
    public func nextMarkedBatch() async -> (frames: [[UInt8]], marks: [FrameMark])? {
        await core.nextMarkedBatch()
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
    /// tables before the hub's next call.
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
