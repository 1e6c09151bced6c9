/// The newest acked publish to one topic: what every subscriber of the topic
/// should have received last once deliveries have settled.
struct TopicLatest: Sendable, Equatable {
    /// The server's id for it, when numeric (ordering across publishers).
    var id: UInt64?
    /// `Payload.tag` of it.
    var tag: UInt64
    /// Monotonic nanoseconds of its ack (orders publishes without numeric ids).
    var ackedAt: UInt64

    /// Whether `self` was published after `other`.
    func isNewer(than other: TopicLatest) -> Bool {
        if let id, let otherID = other.id { return id > otherID }
        return ackedAt > other.ackedAt
    }
}

/// What one publisher did, merged across publishers at the end of the run.
struct PublisherResult: Sendable {
    var attempted = 0
    var acked = 0
    var failed = 0
    /// Σ over acked publishes of the subscribers of its topic that were streaming
    /// (as this process knows them) when it was sent: deliveries owed.
    var expected = 0
    /// Σ of the `subscribers` count in the server's replies (acked publishes whose
    /// reply had one): how many subscribers the server says it queued them for.
    var serverCounted = 0
    /// Acked publishes whose reply had no subscriber count.
    var repliesWithoutCount = 0
    /// Acked publishes whose reply's count differs from the subscribers this process had streaming.
    var countMismatches = 0
    /// Request written to reply read, for acked publishes.
    var ackLatency = LatencyHistogram()
    /// Per topic, the newest acked publish.
    var latest: [TopicLatest?]
    /// Monotonic nanoseconds when the publisher stopped.
    var finishedAt: UInt64 = 0
    var firstError: String?

    init(topics: Int) {
        latest = Array(repeating: nil, count: topics)
    }

    mutating func note(_ reply: TopicLatest, topic: Int) {
        if let current = latest[topic], !reply.isNewer(than: current) { return }
        latest[topic] = reply
    }

    mutating func merge(_ other: PublisherResult) {
        attempted += other.attempted
        acked += other.acked
        failed += other.failed
        expected += other.expected
        serverCounted += other.serverCounted
        repliesWithoutCount += other.repliesWithoutCount
        countMismatches += other.countMismatches
        ackLatency.merge(other.ackLatency)
        for (topic, value) in other.latest.enumerated() {
            if let value { note(value, topic: topic) }
        }
        finishedAt = max(finishedAt, other.finishedAt)
        if firstError == nil { firstError = other.firstError }
    }
}
