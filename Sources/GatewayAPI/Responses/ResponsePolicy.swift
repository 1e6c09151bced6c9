import HTTPCore

/// The one place that decides what every answer of the gateway carries besides what
/// its handler meant (API.md, "Everything else"; README, "Choices"):
///
/// - every response, refusals included, carries `Access-Control-Allow-Origin`
///   (`--cors-origin`), so a cross-origin page can read streams, replies and why it
///   was refused;
/// - a refusal is the status with a one-line `text/plain; charset=utf-8` body.
///
/// Applied once, after routing (`finish`), and handed to `HTTPServer` for the
/// answers the HTTP layer gives on its own (`refusal`), so both agree.
public struct ResponsePolicy: Sendable {
    public let corsOrigin: String

    public init(corsOrigin: String) {
        self.corsOrigin = corsOrigin
    }

    /// The response on the wire for what a handler meant.
    public func finish(_ reply: Reply) -> HTTPResponse {
        switch reply {
        case .response(var response):
            // A handler that built its fields with `applied(to:)` (the publish reply) has
            // the field already: its shared fields are not copied per reply.
            if response.head.headers["Access-Control-Allow-Origin"] != corsOrigin {
                response.head.headers.replaceOrAdd(name: "Access-Control-Allow-Origin", value: corsOrigin)
            }
            return response
        case .refusal(let refusal):
            return self.refusal(refusal.status, refusal.reason, headers: refusal.headers)
        }
    }

    /// `headers` with what `finish` adds, for a handler to build a reply's fields once
    /// (then `finish` leaves them as they are instead of copying them per reply).
    public func applied(to headers: HTTPHeaders) -> HTTPHeaders {
        var headers = headers
        headers.replaceOrAdd(name: "Access-Control-Allow-Origin", value: corsOrigin)
        return headers
    }

    /// A refusal: `status`, `headers`, the CORS field and `reason` as a one-line text body.
    public func refusal(_ status: HTTPStatus, _ reason: String, headers: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = headers
        headers.replaceOrAdd(name: "Access-Control-Allow-Origin", value: corsOrigin)
        return .text(status, reason, headers: headers)
    }

    /// The answer to a CORS preflight (and a plain `OPTIONS`) of a path taking `allow`.
    public static func preflight(allow: String) -> Reply {
        var headers: HTTPHeaders = ["Allow": allow]
        headers.add(name: "Access-Control-Allow-Methods", value: allow)
        headers.add(name: "Access-Control-Allow-Headers", value: "Authorization, Content-Type, Last-Event-ID")
        headers.add(name: "Access-Control-Max-Age", value: "86400")
        return .response(HTTPResponse(status: .noContent, headers: headers))
    }
}
