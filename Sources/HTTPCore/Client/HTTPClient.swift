import Locking

/// A minimal HTTP/1.1 client connection on the event loop, for tests and the
/// load tool: send a request, read the response head, then the body whole or
/// piece by piece (SSE). One request in flight at a time unless the caller
/// pipelines on purpose with `send`. With `http2`, the same calls speak HTTP/2
/// (prior knowledge in cleartext, ALPN `h2` over TLS) through libnghttp2: each
/// request a new stream, its response read as the same events.
public final class HTTPClient: Sendable {
    public let connection: Connection
    private let parser: ParserBox
    /// The HTTP/2 session, when the connection speaks HTTP/2.
    private let http2: HTTP2SessionBox?
    private let scheme: String

    /// Whether this connection speaks HTTP/2.
    public var isHTTP2: Bool { http2 != nil }

    /// A fully read response.
    public struct Response: Sendable {
        public var head: HTTPResponseParser.Head
        public var body: [UInt8]
        public var status: Int { head.status }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    private init(connection: Connection, http2: Bool) throws {
        self.connection = connection
        parser = ParserBox()
        self.http2 = http2 ? HTTP2SessionBox(try HTTP2ClientSession()) : nil
        scheme = connection.isTLS ? "https" : "http"
    }

    /// Connects; with `tls`, speaks HTTPS (the handshake completes here, so
    /// a certificate that does not verify fails this call). With `http2`, speaks
    /// HTTP/2: with prior knowledge in cleartext; over TLS when ALPN agrees on `h2`
    /// (offered before `http/1.1`; a server that picks `http/1.1` gets HTTP/1.1).
    public static func connect(host: String = "127.0.0.1", port: Int,
                               deadline: ContinuousClock.Instant? = nil,
                               tls: TLSClientContext? = nil, http2: Bool = false) async throws -> HTTPClient {
        guard let address = SocketAddress.resolve(host: host, port: port) else {
            throw HTTPServerError.badAddress(host)
        }
        var tls = tls
        if http2 { tls?.offersHTTP2 = true }
        let connection = try await Connection.connect(to: address, deadline: deadline, tls: tls)
        let client = try HTTPClient(connection: connection,
                                    http2: http2 && (tls == nil || connection.tlsALPNProtocol == "h2"))
        if client.isHTTP2 { try await client.flush() }
        return client
    }

    /// Sends raw bytes (a request, or deliberately broken input).
    public func send(_ text: String) async throws {
        try await connection.write(Array(text.utf8))
    }

    public func send(_ bytes: [UInt8]) async throws {
        try await connection.write(bytes)
    }

    /// Sends a request with `Content-Length` framing.
    public func request(_ method: String, _ target: String, headers: [(String, String)] = [],
                        body: [UInt8]? = nil) async throws {
        if let http2 {
            try http2.session.withLock { session throws in
                try session.request(method: method, target: target, scheme: scheme, headers: headers, body: body)
            }
            return try await flush()
        }
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        try await connection.write([Array(text.utf8), body ?? []])
    }

    /// Reads the next event of the response (head, body piece, end); nil at EOF.
    public func nextEvent(deadline: ContinuousClock.Instant? = nil) async throws -> HTTPResponseParser.Event? {
        if let http2 { return try await nextHTTP2Event(http2, deadline: deadline) }
        while true {
            if let event = try parser.next() { return event }
            let bytes = try await connection.read(maxBytes: 16 * 1024, deadline: deadline)
            if bytes.isEmpty { return nil }
            parser.append(bytes)
        }
    }

    /// Reads one whole response (interim 1xx responses skipped unless `keepInterim`).
    public func response(deadline: ContinuousClock.Instant? = nil, keepInterim: Bool = false,
                         requestWasHead: Bool = false) async throws -> Response {
        if requestWasHead { parser.expectResponseToHEAD() }
        var head: HTTPResponseParser.Head?
        var body: [UInt8] = []
        while let event = try await nextEvent(deadline: deadline) {
            switch event {
            case .head(let parsed):
                if parsed.status < 200 && !keepInterim { continue }
                head = parsed
                if parsed.status < 200 { return Response(head: parsed, body: []) }
            case .body(let bytes):
                body.append(contentsOf: bytes)
            case .end:
                if let head { return Response(head: head, body: body) }
            }
        }
        guard let head else { throw HTTPResponseParser.Failure(reason: "connection closed before a response") }
        return Response(head: head, body: body)  // close-delimited body
    }

    public func close() {
        connection.close()
    }

    /// Writes what the HTTP/2 session has to send.
    private func flush(deadline: ContinuousClock.Instant? = nil) async throws {
        guard let http2 else { return }
        let out = http2.session.withLock { $0.output() }
        if !out.isEmpty { try await connection.write(out, deadline: deadline) }
    }

    /// `nextEvent` over HTTP/2: the followed stream's next event, reading (and writing
    /// what the session answers: acknowledgements, window updates, the rest of a
    /// request body) until there is one; nil once that stream is over or the connection ends.
    private func nextHTTP2Event(_ http2: HTTP2SessionBox,
                                deadline: ContinuousClock.Instant?) async throws -> HTTPResponseParser.Event? {
        while true {
            let (event, over) = http2.session.withLock { session in (session.next(), session.isOver) }
            if let event { return event }
            if over { return nil }
            let bytes = try await connection.read(maxBytes: 16 * 1024, deadline: deadline)
            if bytes.isEmpty { return nil }
            try http2.session.withLock { session throws in try session.receive(bytes) }
            try? await flush(deadline: deadline)  // a server that already closed is told by the next read
        }
    }
}


/// The parser behind a lock, so the client can be `Sendable`; one task reads at a time.
private final class ParserBox: Sendable {
    private let parser = Locked(HTTPResponseParser())

    func append(_ bytes: [UInt8]) { parser.withLock { $0.append(bytes) } }

    func expectResponseToHEAD() { parser.withLock { $0.expectResponseToHEAD() } }

    func next() throws -> HTTPResponseParser.Event? {
        try parser.withLock { parser throws in try parser.next() }
    }
}

/// The HTTP/2 session behind a lock, so the client can be `Sendable`; one task reads at a time.
private final class HTTP2SessionBox: Sendable {
    let session: Locked<HTTP2ClientSession>

    init(_ session: consuming sending HTTP2ClientSession) { self.session = Locked(session) }
}
