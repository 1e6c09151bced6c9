import HTTPCore

/// One keep-alive HTTP/1.1 connection that sends a request and reads its
/// whole response, in turn (no pipelining). Owned by one publisher task.
struct PublishConnection {
    /// A whole response.
    struct Reply {
        var status: Int
        var body: [UInt8]
        /// The server asked to close the connection after this response.
        var closes: Bool
    }

    private let connection: Connection
    private var parser = HTTPResponseParser()

    static func open(_ address: SocketAddress, deadline: ContinuousClock.Instant) async throws -> PublishConnection {
        PublishConnection(connection: try await Connection.connect(to: address, deadline: deadline))
    }

    private init(connection: Connection) {
        self.connection = connection
    }

    /// Writes `request` and reads its response (interim 1xx responses skipped).
    mutating func exchange(_ request: [[UInt8]], deadline: ContinuousClock.Instant) async throws -> Reply {
        try await connection.write(request, deadline: deadline)
        var status: Int?
        var closes = false
        var body: [UInt8] = []
        while true {
            while let event = try parser.next() {
                switch event {
                case .head(let head):
                    if head.status < 200 { continue }
                    status = head.status
                    closes = head.headers["Connection"]?.lowercased() == "close"
                case .body(let bytes):
                    body.append(contentsOf: bytes)
                case .end:
                    guard let status else { throw StreamFailure(description: "a response body before its head") }
                    return Reply(status: status, body: body, closes: closes)
                }
            }
            let bytes = try await connection.read(maxBytes: 4096, deadline: deadline)
            guard !bytes.isEmpty else { throw StreamFailure(description: "connection closed before the response ended") }
            parser.append(bytes)
        }
    }

    func close() {
        connection.close()
    }
}
