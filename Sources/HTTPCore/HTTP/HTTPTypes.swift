/// The HTTP versions the server speaks. Anything else is refused with `505`.
public enum HTTPVersion: Sendable, Equatable {
    case http10
    case http11

    /// The version as it appears on the wire, e.g. `HTTP/1.1`.
    public var text: String {
        switch self {
        case .http10: return "HTTP/1.0"
        case .http11: return "HTTP/1.1"
        }
    }
}

/// A response status: the code and its reason phrase.
public struct HTTPStatus: Sendable, Equatable {
    public let code: Int
    public let reason: String

    public init(code: Int, reason: String) {
        self.code = code
        self.reason = reason
    }

    public static let `continue` = HTTPStatus(code: 100, reason: "Continue")
    public static let ok = HTTPStatus(code: 200, reason: "OK")
    public static let noContent = HTTPStatus(code: 204, reason: "No Content")
    public static let notModified = HTTPStatus(code: 304, reason: "Not Modified")
    public static let badRequest = HTTPStatus(code: 400, reason: "Bad Request")
    public static let unauthorized = HTTPStatus(code: 401, reason: "Unauthorized")
    public static let notFound = HTTPStatus(code: 404, reason: "Not Found")
    public static let methodNotAllowed = HTTPStatus(code: 405, reason: "Method Not Allowed")
    public static let requestTimeout = HTTPStatus(code: 408, reason: "Request Timeout")
    public static let lengthRequired = HTTPStatus(code: 411, reason: "Length Required")
    public static let contentTooLarge = HTTPStatus(code: 413, reason: "Content Too Large")
    public static let uriTooLong = HTTPStatus(code: 414, reason: "URI Too Long")
    public static let expectationFailed = HTTPStatus(code: 417, reason: "Expectation Failed")
    public static let headersTooLarge = HTTPStatus(code: 431, reason: "Request Header Fields Too Large")
    public static let internalServerError = HTTPStatus(code: 500, reason: "Internal Server Error")
    public static let notImplemented = HTTPStatus(code: 501, reason: "Not Implemented")
    public static let serviceUnavailable = HTTPStatus(code: 503, reason: "Service Unavailable")
    public static let versionNotSupported = HTTPStatus(code: 505, reason: "HTTP Version Not Supported")
}

/// How a request body is delimited, decided from its head.
public enum HTTPBodyFraming: Sendable, Equatable {
    /// No body (no `Content-Length`, no `Transfer-Encoding`).
    case none
    /// Exactly this many bytes follow the head.
    case contentLength(Int)
    /// `Transfer-Encoding: chunked`.
    case chunked
}

/// A parsed request line and header block.
public struct HTTPRequestHead: Sendable, Equatable {
    /// The request line's parts, kept as the parser made them: a head is made by moving the
    /// line in whole (its four strings copied out one by one cost a retain and a release
    /// each per request, issue 27).
    var line: HTTPRequestLine
    /// The method token as sent (case-sensitive, e.g. `GET`).
    public var method: String {
        get { line.method }
        set { line.method = newValue }
    }
    /// The request target exactly as sent, e.g. `/events/a%2Fb?event=x`.
    public var target: String {
        get { line.target }
        set { line.target = newValue }
    }
    /// The target's path part, still percent-encoded (before any `?`).
    public var rawPath: String {
        get { line.rawPath }
        set { line.rawPath = newValue }
    }
    /// The target's query part without the `?`, or nil when there is none.
    public var query: String? {
        get { line.query }
        set { line.query = newValue }
    }
    public var version: HTTPVersion {
        get { line.version }
        set { line.version = newValue }
    }
    public var headers: HTTPHeaders
    public var bodyFraming: HTTPBodyFraming
    /// Whether the connection may carry another request after this one
    /// (HTTP/1.1 unless `Connection: close`; HTTP/1.0 only with `Connection: keep-alive`).
    public var keepAlive: Bool
    /// Whether the client sent `Expect: 100-continue`.
    public var expectsContinue: Bool

    public init(method: String, target: String, rawPath: String, query: String?, version: HTTPVersion,
                headers: HTTPHeaders, bodyFraming: HTTPBodyFraming, keepAlive: Bool, expectsContinue: Bool) {
        line = HTTPRequestLine(method: method, target: target, rawPath: rawPath, query: query, version: version)
        self.headers = headers
        self.bodyFraming = bodyFraming
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
    }

    init(line: consuming HTTPRequestLine, headers: consuming HTTPHeaders, bodyFraming: HTTPBodyFraming,
         keepAlive: Bool, expectsContinue: Bool) {
        self.line = line
        self.headers = headers
        self.bodyFraming = bodyFraming
        self.keepAlive = keepAlive
        self.expectsContinue = expectsContinue
    }
}

/// A complete request: its head and its whole (bounded) body.
public struct HTTPRequest: Sendable, Equatable {
    public var head: HTTPRequestHead
    public var body: [UInt8]

    public init(head: HTTPRequestHead, body: [UInt8]) {
        self.head = head
        self.body = body
    }
}

/// A response status line and header block, serialized by `HTTPResponseHead.bytes`.
public struct HTTPResponseHead: Sendable, Equatable {
    public var status: HTTPStatus
    public var headers: HTTPHeaders

    public init(status: HTTPStatus, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.headers = headers
    }
}

/// The server's limits on what a client may send. One place, so tests and the
/// command line agree on the defaults.
public struct HTTPLimits: Sendable, Equatable {
    /// Request line plus header fields, in bytes (`431` past it).
    public var maxHeaderBytes: Int = 16 * 1024
    /// Request target, in bytes (`414` past it).
    public var maxURIBytes: Int = 8 * 1024
    /// Decoded body, in bytes (`413` past it).
    public var maxBodyBytes: Int = 64 * 1024

    public init() {}
}

/// A request the server refuses: the status to answer with and a one-line reason.
/// The connection is closed after the answer.
public struct HTTPParseError: Error, Sendable, Equatable {
    public var status: HTTPStatus
    public var reason: String

    public init(_ status: HTTPStatus, _ reason: String) {
        self.status = status
        self.reason = reason
    }
}
