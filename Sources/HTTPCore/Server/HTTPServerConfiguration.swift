/// Everything an `HTTPServer` needs to know before it starts: where to
/// listen, how many connections to hold, what clients may send, and how long
/// they may take.
public struct HTTPServerConfiguration: Sendable {
    public var host = "127.0.0.1"
    /// 0 picks an ephemeral port; `HTTPServer.port` tells which.
    public var port = 8080
    public var backlog: Int32 = 4096
    /// Connections held at once; past it new ones get `503` with `Retry-After` and are closed.
    public var maxConnections = 10_000
    /// Connections held at once from one client address (the port aside); past it
    /// new ones from that address get `503` with `Retry-After` and are closed. nil: no such cap.
    public var maxConnectionsPerAddress: Int? = nil
    public var limits = HTTPLimits()
    /// A request head must be complete this long after its first byte (and the
    /// first request this long after connecting): the slowloris deadline.
    public var headerTimeout: Duration = .seconds(10)
    /// A keep-alive connection with no request in flight is closed after this.
    public var idleTimeout: Duration = .seconds(60)
    /// A body must keep moving: each read must bring bytes within this.
    public var bodyTimeout: Duration = .seconds(10)
    /// A fixed response must be taken by the client within this.
    public var writeTimeout: Duration = .seconds(30)
    /// `Retry-After` seconds on the over-capacity `503`.
    public var retryAfterSeconds = 1
    /// HTTP/2 on the same listener (ALPN `h2`, cleartext prior knowledge) and its limits.
    public var http2 = HTTP2Settings()
    /// Builds every answer the server gives on its own (a refused request, `408`,
    /// the over-capacity `503`) from its status and one-line reason, so the
    /// application's policy (its CORS field, say) holds for those too. The server
    /// then adds `Connection: close`, `Date`, `Content-Length` and, on the `503`,
    /// `Retry-After`. By default a plain-text line.
    public var refusal: @Sendable (HTTPStatus, String) -> HTTPResponse = { status, reason in
        .text(status, reason)
    }

    public init() {}
}
