/// What a request handler answers: a head and either a whole body or a
/// streaming body that owns the connection until it returns.
public struct HTTPResponse: Sendable {
    public enum Body: Sendable {
        /// A fixed body, sent with `Content-Length` (omitted on the wire for `HEAD`).
        case bytes([UInt8])
        /// A long-lived body the event loop writes from a `StreamSource` (SSE
        /// subscribers): no task wakes per batch (`StreamPump`); the connection
        /// closes after it. To a `HEAD` request only the head a `GET` gets is sent
        /// (its framing, no length) and the source is cancelled unread: the one
        /// place HEAD is decided for a stream (`SourcedBody.empty` answers a HEAD
        /// that must not open the stream).
        ///
        /// Indirect (boxed, one allocation per stream): `SourcedBody` holds a
        /// `ContinuousClock.Instant`, a resilient type; unboxed, every response and
        /// `Reply` would be of a size known only at run time, and each async frame
        /// holding one would take a task-allocator slot for it, and each copy go through
        /// value witnesses (about 800 instructions a publish request, issue 27).
        indirect case source(SourcedBody)
    }

    public var head: HTTPResponseHead
    public var body: Body

    public init(head: HTTPResponseHead, body: Body) {
        self.head = head
        self.body = body
    }

    /// A fixed response.
    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.init(head: HTTPResponseHead(status: status, headers: headers), body: .bytes(body))
    }

    /// A one-line plain-text answer, as API.md asks of every error.
    public static func text(_ status: HTTPStatus, _ line: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: "text/plain; charset=utf-8")
        return HTTPResponse(status: status, headers: headers, body: Array((line + "\n").utf8))
    }
}

/// Handles one complete request. Runs inside the connection's task, on its executor
/// (`nonisolated(nonsending)`): calling it is not an executor switch (issue 27).
public typealias HTTPHandler = nonisolated(nonsending) @Sendable (HTTPRequest) async -> HTTPResponse
