/// The body writer of a streaming response. It frames what it is given for
/// the request's HTTP version (chunked on 1.1, close-delimited on 1.0), so the
/// code above writes plain payload bytes.
///
/// One task writes at a time; `onPeerClosed` and `abort` may be used from anywhere.
public final class ResponseStream: Sendable {
    let connection: Connection
    let chunked: Bool

    init(connection: Connection, chunked: Bool) {
        self.connection = connection
        self.chunked = chunked
    }

    /// Writes the chunks, in order, as one `writev` where the socket allows.
    public func write(_ chunks: [[UInt8]]) async throws {
        guard chunked else { return try await connection.write(chunks) }
        var size = 0
        for chunk in chunks { size += chunk.count }
        guard size > 0 else { return }
        var framed: [[UInt8]] = []
        framed.reserveCapacity(chunks.count + 2)
        framed.append(ChunkedEncoding.chunkHeader(size: size))
        framed.append(contentsOf: chunks)
        framed.append(ChunkedEncoding.chunkEnd)
        try await connection.write(framed)
    }

    /// See `Connection.onPeerClosed`.
    /// Suspends for a few turns of the connection's event loop, so that what the
    /// work already queued there adds to this stream goes out with the next
    /// write (`EventLoop.afterQueuedWork`).
    public func afterQueuedWork() async {
        await connection.loop.afterQueuedWork()
    }

    public func onPeerClosed(_ handler: @escaping @Sendable () -> Void) {
        connection.onPeerClosed(handler)
    }

    /// Whether the client has gone.
    public var isPeerClosed: Bool { connection.isPeerClosed }

    /// Ends the connection at once (e.g. a subscriber that fell too far behind):
    /// a write in progress fails, the stream's task unwinds.
    public func abort() {
        connection.abort()
    }

    /// Writes the terminating chunk of a chunked body (best effort).
    func finish(deadline: ContinuousClock.Instant) async {
        guard chunked, !connection.isPeerClosed else { return }
        try? await connection.write([ChunkedEncoding.lastChunk], deadline: deadline)
    }
}
