/// The two independent channels every topic has (API.md, "Topics").
public enum Channel: String, Sendable, CaseIterable {
    /// Replay-latest: a new subscriber first gets the current value; a slow one skips
    /// superseded values and always ends on the newest.
    case state
    /// Passthrough: every event after subscribing, in order, exactly once; resumable
    /// from the replay window with `Last-Event-ID`.
    case events
}

/// Why a subscription ended. Reported exactly once, through `Subscription.onFinish`.
public enum FinishReason: Sendable, Equatable {
    /// The consumer went away: `cancel()`, the consuming task was cancelled, or the
    /// `Subscription` was dropped.
    case cancelled
    /// An events subscriber had `eventsQueueLimit` frames pending when another arrived.
    case overflow
    /// The hub was shut down (or dropped).
    case shutdown
}

/// What a publish did: the id it was given and how many subscribers it was queued for.
public struct PublishResult: Sendable, Equatable {
    /// The id of the published value on its topic and channel.
    public let id: UInt64
    /// How many subscribers the frame was queued for (subscribers disconnected by this
    /// very publish for overflowing are not counted).
    public let subscribers: Int

    public init(id: UInt64, subscribers: Int) {
        self.id = id
        self.subscribers = subscribers
    }
}

/// Why a publish changed nothing.
public enum PublishError: Error, Sendable, Equatable {
    /// An externally supplied id was not greater than the topic/channel's last id.
    case staleID(last: UInt64)
    /// The hub has been shut down.
    case shutdown
    /// The value could not be stored, or not as durably as asked (the cluster's Redis
    /// is unreachable, did not answer in time, or too few replicas confirmed it):
    /// answer 503 with `Retry-After` and `reason`, this refusal's own sentence.
    case unavailable(reason: String)
}
