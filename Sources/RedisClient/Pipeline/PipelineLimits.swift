/// The bounds every Redis connection keeps, in one place.
struct PipelineLimits: Sendable {
    /// Commands sent or queued and not answered yet; one more fails at once with
    /// `.timedOut` (nothing sent, the connection stays open).
    var maxPending = 100_000
    /// Encoded commands waiting for the next write; one that would go past it
    /// fails like a command past `maxPending`.
    var maxUnsentBytes = 64 << 20
    /// Bytes of one reply still being assembled (Redis's own bulk limit is 512 MB;
    /// the gateway's values are far smaller). Past it: `.protocolError`, closed.
    var maxReplyBytes = 64 << 20
    /// Bytes asked of one `read`.
    var readChunk = 64 << 10
    /// The write buffer keeps its capacity between writes up to this size.
    var keptWriteCapacity = 1 << 20
    /// How often an idle reader wakes to check deadlines: a command sent while
    /// the reader waits is timed out at most this much (plus the loop's 100 ms
    /// tick) after its deadline.
    var checkInterval: Duration = .milliseconds(100)

    static let standard = PipelineLimits()
}
