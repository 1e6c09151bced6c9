/// One subscriber of several topics' channel in one stream (API.md, "Several topics
/// in one stream"), with a single consumer: one `SubscriberCore` and one bounded
/// queue that every one of its topics feeds, not a subscription per topic.
///
/// Its frames are the shared JSON frames of `TopicFrameEncoder`, each with its
/// `FrameMark`. The cursor is the consumer's: it starts at `startPositions` and moves
/// to a mark's id when the consumer writes that frame, so the hub encodes a value once
/// for all such subscribers although each one's `id:` line differs.
///
/// It ends as `Subscription` does; the subscriber then leaves every topic's table at once.
public final class TopicsSubscription: Sendable {
    public let channel: Channel
    /// The topics, in parameter order (a mark's slot indexes this).
    public let topics: [String]
    /// Where the stream starts in each topic: the position it resumed from, else the
    /// topic's last id on the channel when the subscription began (0 for none).
    public let startPositions: [UInt64]
    private let core: SubscriberCore

    init(core: SubscriberCore, startPositions: [UInt64]) {
        self.channel = core.key.channel
        self.topics = core.key.topics
        self.startPositions = startPositions
        self.core = core
    }

    /// Waits until frames are pending and returns all of them, oldest first, each with
    /// its mark (`marks[i]` is `frames[i]`'s), or nil once finished. Cancelling the
    /// calling task finishes the subscription with `.cancelled` and returns nil.
    /// Must not be called concurrently with itself.
    public func nextBatch() async -> (frames: [[UInt8]], marks: [FrameMark])? {
        await core.nextMarkedBatch()
    }

    /// Takes the pending frames without waiting, or arranges for `ready` to be called
    /// once when there are some (or the subscription ends) and returns `.pending`:
    /// the way an event loop drains a subscriber without waking a task per frame.
    /// The single consumer uses either this or `nextBatch`, never both at once.
    public func poll(orNotify ready: @escaping @Sendable () -> Void) -> SubscriberPoll {
        core.poll(orNotify: ready)
    }

    /// Ends the subscription with `.cancelled`; later calls do nothing.
    public func cancel() {
        core.finish(.cancelled, fromConsumer: true)
    }

    /// Calls `handler` exactly once with the finish reason (see `Subscription.onFinish`).
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
