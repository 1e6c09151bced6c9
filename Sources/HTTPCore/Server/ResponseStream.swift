/// A streaming response's connection, for its pump (`StreamPump`): it frames the
/// source's bytes for the request's HTTP version (chunked on 1.1, close-delimited
/// on 1.0), and ends the body.
///
/// `onPeerClosed` and `abort` may be used from anywhere.
public final class ResponseStream: Sendable {
    let connection: Connection
    let chunked: Bool
    /// Over HTTP/2, the stream this response is (aborting it resets the stream only).
    let http2: HTTP2StreamControl?

    init(connection: Connection, chunked: Bool, http2: HTTP2StreamControl? = nil) {
        self.connection = connection
        self.chunked = chunked
        self.http2 = http2
    }

    /// The chunks as the body carries them: on HTTP/1.1 one chunk of them all
    /// (size line, the chunks themselves, CRLF; nothing for no bytes), on 1.0 as they are.
    func framed(_ chunks: [[UInt8]]) -> [[UInt8]] {
        guard chunked else { return chunks }
        var size = 0
        for chunk in chunks { size += chunk.count }
        guard size > 0 else { return [] }
        var framed: [[UInt8]] = []
        framed.reserveCapacity(chunks.count + 2)
        framed.append(ChunkedEncoding.chunkHeader(size: size))
        framed.append(contentsOf: chunks)
        framed.append(ChunkedEncoding.chunkEnd)
        return framed
    }

    /// See `Connection.onPeerClosed`.
    public func onPeerClosed(_ handler: @escaping @Sendable () -> Void) {
        if let http2 { return http2.onPeerClosed(handler) }
        connection.onPeerClosed(handler)
    }

    /// Ends the connection at once (e.g. a subscriber that fell too far behind):
    /// a write in progress fails, the stream's task unwinds.
    public func abort() {
        if let http2 { return http2.abort() }
        connection.abort()
    }

    /// Writes the terminating chunk of a chunked body (best effort).
    func finish(deadline: ContinuousClock.Instant) async {
        guard chunked, !connection.isPeerClosed else { return }
        try? await connection.write([ChunkedEncoding.lastChunk], deadline: deadline)
    }
}
