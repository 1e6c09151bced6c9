/// A handler's response on the wire: a complete one encoded into the connection's
/// `ReplyBatch` (written with the other replies of the same read), a streaming one
/// handed to a `StreamPump`, and the server's own refusals.
extension HTTPServer {
    /// What a response left the connection to do next.
    enum AfterResponse {
        case keepAlive
        case close
        /// The head of a streaming response went out; its body runs next.
        case stream(StreamingBody)
    }

    /// One word or two in the connection's frames for the stream's whole life.
    enum StreamingBody: Sendable {
        /// The head is not written yet: the pump writes it with the first batch.
        case pump(StreamPump)
        /// The connection speaks HTTP/2 (ALPN `h2`, or these first bytes began the preface).
        case http2([UInt8])
    }

    /// Encodes a complete response into `replies`, or, for a stream, makes the pump that
    /// writes its head with the first batch. Writes nothing: the request loop writes the
    /// batch before it reads again (and before a stream starts).
    func respond(to request: HTTPRequest, with response: HTTPResponse, on connection: Connection,
                 into replies: inout ReplyBatch) -> AfterResponse {
        if case .bytes(let body) = response.body {
            return respondComplete(to: request, head: response.head, body: body, into: &replies)
        }
        var head = response.head
        head.headers.replaceOrAdd(name: "Date", value: HTTPDate.now())
        let isHEAD = request.head.method == "HEAD"
        switch response.body {
        case .bytes:
            preconditionFailure("a complete body is answered by respondComplete")
        case .source(let sourced) where isHEAD:
            // The head a GET would get, framing included (a stream has no length
            // to announce); the source is not read.
            sourced.source.cancel()
            if request.head.version == .http11 { head.headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked") }
            return encodeComplete(head, body: [], for: request, into: &replies) ? .keepAlive : .close
        case .source(let sourced):
            let chunked = request.head.version == .http11
            if chunked { head.headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked") }
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            return .stream(.pump(StreamPump(stream: ResponseStream(connection: connection, chunked: chunked),
                                            head: head.bytes(version: .http11), body: sourced)))
        }
    }

    /// A response with a complete body: the server's `Date` and (unless the status has no
    /// body, or a `HEAD` answer already names the GET body's length) `Content-Length`
    /// replace any the handler set.
    private func respondComplete(to request: HTTPRequest, head: HTTPResponseHead, body: [UInt8],
                                 into replies: inout ReplyBatch) -> AfterResponse {
        let isHEAD = request.head.method == "HEAD"
        let mayHaveBody = Self.mayHaveBody(head.status)
        // A HEAD answer may already carry the length the GET body would have.
        let keepsLength = isHEAD && head.headers.contains("Content-Length")
        let length = mayHaveBody && !keepsLength ? body.count : nil
        let sendBody = !isHEAD && mayHaveBody
        let keepAlive = encodeComplete(head, date: true, contentLength: length, body: sendBody ? body : [],
                                       for: request, into: &replies)
        return keepAlive ? .keepAlive : .close
    }

    /// Encodes a response that ends with `body` after the replies waiting in `replies`;
    /// true when the connection may carry another request. The head is encoded straight to
    /// bytes: the handler's fields, minus those the server sets, then `Date` (when `date`),
    /// `Content-Length` (when `contentLength`) and `Connection` (when the connection
    /// closes, or stays open for HTTP/1.0), in that order. A small body goes in the same
    /// buffer; a larger one follows it as a buffer of its own in the same `writev`.
    private func encodeComplete(_ head: HTTPResponseHead, date: Bool = false, contentLength: Int? = nil,
                                body: [UInt8], for request: HTTPRequest, into replies: inout ReplyBatch) -> Bool {
        let wantsClose = head.headers.firstValue(ofLowercase: "connection", equalsIgnoringCase: "close")
        let keepAlive = request.head.keepAlive && !wantsClose && !isShuttingDown
        let connectionLine: [UInt8]? = !keepAlive ? HTTPServerFields.closeLine
            : request.head.version == .http10 ? HTTPServerFields.keepAliveLine : nil
        var replaced: HTTPServerFields = []
        if date { replaced.insert(.date) }
        if contentLength != nil { replaced.insert(.contentLength) }
        if connectionLine != nil { replaced.insert(.connection) }
        let inline = body.count <= Self.inlineBodyLimit
        var encoder = HTTPResponseHeadEncoder(status: head.status,
                                              after: replies.openBuffer(reserving: 256 + (inline ? body.count : 0)))
        encoder.appendFields(of: head.headers, skipping: replaced)
        if date { encoder.appendFieldLine(HTTPDateCache.shared.fieldLine) }
        if let contentLength { encoder.appendContentLength(contentLength) }
        if let connectionLine { encoder.appendFieldLine(connectionLine) }
        encoder.endHead()
        if inline {
            encoder.appendBody(body)
            replies.closeBuffer(encoder.finish())
        } else {
            replies.closeBuffer(encoder.finish(), body: body)
        }
        return keepAlive
    }

    /// Bodies up to this size are copied behind the head into the batch's buffer; larger
    /// ones go as a buffer of their own in the same `writev`.
    static let inlineBodyLimit = 4096

    /// A refusal on the wire: what the configured `refusal` builds for the status
    /// and reason, with `extra` fields, `Connection: close`, `Date` and its length.
    func refusal(_ status: HTTPStatus, _ reason: String, extra: HTTPHeaders = HTTPHeaders()) -> [[UInt8]] {
        var response = configuration.refusal(status, reason)
        guard case .bytes(let body) = response.body else { return [] }
        for field in extra { response.head.headers.replaceOrAdd(name: field.name, value: field.value) }
        response.head.headers.replaceOrAdd(name: "Connection", value: "close")
        response.head.headers.replaceOrAdd(name: "Date", value: HTTPDate.now())
        response.head.headers.replaceOrAdd(name: "Content-Length", value: "\(body.count)")
        return [response.head.bytes(version: .http11), body]
    }

    private static func mayHaveBody(_ status: HTTPStatus) -> Bool {
        !(100..<200).contains(status.code) && status.code != 204 && status.code != 304
    }
}
