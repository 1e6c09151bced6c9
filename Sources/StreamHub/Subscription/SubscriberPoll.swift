/// What a subscription's consumer gets from `poll`: the frames pending now, word
/// that it will be told when some arrive, or the end.
public enum SubscriberPoll: Sendable {
    /// Every pending frame, oldest first. `marks[i]` is `frames[i]`'s mark on a
    /// tagged subscription (else `marks` is empty); `values` of the frames are
    /// values (the rest are heartbeats); the oldest value was queued at
    /// `oldestValueAt` (nil when the batch holds none).
    case frames([[UInt8]], marks: [FrameMark], values: Int, oldestValueAt: QueueTime?)
    /// Nothing pending: the `ready` callback given to `poll` will be called once,
    /// when a frame is queued or the subscription ends.
    case pending
    /// The subscription has ended; no more frames.
    case finished
}
