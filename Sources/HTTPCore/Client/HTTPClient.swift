import Locking

/// A minimal HTTP/1.1 client connection on the event loop, for tests and the
/// load tool: send a request, read the response head, then the body whole or
/// piece by piece (SSE). One request in flight at a time unless the caller
/// pipelines on purpose with `send`.
public final class HTTPClient: Sendable {
    public let connection: Connection
    private let parser: ParserBox

    /// A fully read response.
    public struct Response: Sendable {
        public var head: HTTPResponseParser.Head
        public var body: [UInt8]
        public var status: Int { head.status }
        public var text: String { String(decoding: body, as: UTF8.self) }
    }

    private init(connection: Connection) {
        self.connection = connection
        parser = ParserBox()
    }

    /// Connects; with `tls`, speaks HTTPS (the handshake completes here, so
    /// a certificate that does not verify fails this call).
    public static func connect(host: String = "127.0.0.1", port: Int,
                               deadline: ContinuousClock.Instant? = nil,
                               tls: TLSClientContext? = nil) async throws -> HTTPClient {
        guard let address = SocketAddress.resolve(host: host, port: port) else {
            throw HTTPServerError.badAddress(host)
        }
        return HTTPClient(connection: try await Connection.connect(to: address, deadline: deadline, tls: tls))
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
        var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.count)\r\n" }
        text += "\r\n"
        try await connection.write([Array(text.utf8), body ?? []])
    }

    /// Reads the next event of the response (head, body piece, end); nil at EOF.
    public func nextEvent(deadline: ContinuousClock.Instant? = nil) async throws -> HTTPResponseParser.Event? {
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
