import HTTPCore

/// What a handler means to answer, before the gateway's `ResponsePolicy` turns it
/// into the response on the wire. Handlers never add `Access-Control-Allow-Origin`
/// or build an error body themselves.
public enum Reply: Sendable {
    /// A response as the handler means it: status, its own fields, body or stream.
    case response(HTTPResponse)
    /// A request refused with a status and a one-line reason.
    case refusal(Refusal)

    /// A refusal with `status`, `reason` and any fields the status needs
    /// (`Allow` on a `405`, `WWW-Authenticate` on a `401`, `Retry-After` on a `503`).
    public static func refused(_ status: HTTPStatus, _ reason: String,
                               headers: HTTPHeaders = HTTPHeaders()) -> Reply {
        .refusal(Refusal(status: status, reason: reason, headers: headers))
    }
}

/// A refused request: API.md answers every error with a status and a one-line
/// plain-text reason, and changes nothing.
public struct Refusal: Error, Sendable {
    public var status: HTTPStatus
    /// One line, without its line end; never an echo of the client's bytes.
    public var reason: String
    /// Fields beside the body's own (`Allow`, `WWW-Authenticate`, `Connection: close`, …).
    public var headers: HTTPHeaders

    public init(status: HTTPStatus, reason: String, headers: HTTPHeaders = HTTPHeaders()) {
        self.status = status
        self.reason = reason
        self.headers = headers
    }
}
