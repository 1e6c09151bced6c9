/// Where a pumped streaming response (`HTTPResponse.Body.source`) gets its bytes.
/// The event loop drains it at the end of a turn and writes what it took straight
/// to the socket, so no task wakes per batch; only a write the socket cannot take
/// at once is handed to the connection's task, which waits for writability.
///
/// Promises the pump keeps: `take` is called by one caller at a time (a single
/// consumer); after it returns `.pending`, the next call comes only after `ready`
/// was called or from the pump's own start; `cancel` is called once when the
/// stream ends for any reason other than the source finishing (the client left,
/// the connection's task was cancelled, the stream's deadline passed).
public protocol StreamSource: AnyObject, Sendable {
    /// What is pending now, or `.pending` after arranging for `ready` to be called
    /// once (from any thread, never under a lock the pump holds) when there is
    /// something, or `.finished` when the stream has nothing more. A later `take`
    /// replaces an arrangement that has not fired.
    func take(orNotify ready: @escaping @Sendable () -> Void) -> StreamTake
    /// Every byte of `batch` reached the socket at `time` (for metrics).
    func written(_ batch: StreamBatch, at time: ContinuousClock.Instant)
    /// The stream ended from the connection's side: let go of what feeds it.
    func cancel()
}

/// One `take` of a `StreamSource`.
public enum StreamTake: Sendable {
    case batch(StreamBatch)
    case pending
    case finished
}

/// Bytes a source hands over in one take, written in one `writev` where the socket
/// allows, with what the source wants to know of them once written.
public struct StreamBatch: Sendable {
    /// The payload, in order (framed for HTTP by the pump).
    public var chunks: [[UInt8]]
    /// How many frames (messages) the chunks hold.
    public var frames: Int
    /// How many of those are values (the rest are heartbeats and the like).
    public var values: Int
    /// When the oldest value among them was queued; nil when there is none.
    public var oldestValueAt: ContinuousClock.Instant?

    public init(chunks: [[UInt8]], frames: Int, values: Int, oldestValueAt: ContinuousClock.Instant?) {
        self.chunks = chunks
        self.frames = frames
        self.values = values
        self.oldestValueAt = oldestValueAt
    }
}

/// A streaming body written by the event loop from a `StreamSource`.
public struct SourcedBody: Sendable {
    /// Bytes that go out before the first batch, in the same write as the response
    /// head and that batch (SSE's `retry:` line).
    public let prelude: [UInt8]
    public let source: any StreamSource
    /// When the stream ends by itself (a token's expiry); nil for never.
    public let endsAt: ContinuousClock.Instant?
    /// Called once, before the first write, with the stream's handle (to abort it
    /// from elsewhere). The pump owns the handle's `onPeerClosed`.
    public let started: (@Sendable (ResponseStream) -> Void)?

    public init(prelude: [UInt8], source: any StreamSource, endsAt: ContinuousClock.Instant? = nil,
                started: (@Sendable (ResponseStream) -> Void)? = nil) {
        self.prelude = prelude
        self.source = source
        self.endsAt = endsAt
        self.started = started
    }

    /// A stream with nothing in it, which ends at once: what a handler answers to a
    /// `HEAD` of a stream it must not open (the server sends the head only).
    public static var empty: SourcedBody { SourcedBody(prelude: [], source: EmptySource()) }
}

/// The source of `SourcedBody.empty`: finished from the start.
private final class EmptySource: StreamSource {
    func take(orNotify ready: @escaping @Sendable () -> Void) -> StreamTake { .finished }
    func written(_ batch: StreamBatch, at time: ContinuousClock.Instant) {}
    func cancel() {}
}
