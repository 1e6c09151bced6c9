import HTTPCore
import StreamHub

/// Maps a request to its handler: a `switch` on path and method, as the
/// gateway has a handful of routes.
struct Router: Sendable {
    let subscribe: SubscribeHandler
    let publish: PublishHandler
    let metrics: MetricsHandler
    let files: StaticFiles
    let corsOrigin: String

    private static let channelMethods = "GET, HEAD, POST, OPTIONS"
    private static let readMethods = "GET, HEAD, OPTIONS"

    func respond(to request: HTTPRequest) async -> HTTPResponse {
        let path = request.head.rawPath
        let method = request.head.method
        if let (channel, remainder) = Self.channelRoute(path) {
            if method == "OPTIONS" { return preflight(allow: Self.channelMethods) }
            guard method == "GET" || method == "HEAD" || method == "POST" else {
                return notAllowed(Self.channelMethods)
            }
            let topic: String
            switch TopicName.parse(rawPath: remainder) {
            case .success(let valid): topic = valid
            case .failure(let failure): return text(.badRequest, failure.reason)
            }
            if method == "POST" { return await publish.respond(to: request, channel: channel, topic: topic) }
            return await subscribe.respond(to: request, channel: channel, topic: topic)
        }
        if method == "OPTIONS" { return preflight(allow: Self.readMethods) }
        guard method == "GET" || method == "HEAD" else { return notAllowed(Self.readMethods) }
        switch path {
        case "/healthz":
            return text(.ok, "ok")
        case "/readyz":
            // Ready to take publishes and new subscriptions (false while a cluster's Redis is unreachable).
            return subscribe.engine.isReady
                ? text(.ok, "ready")
                : .text(.serviceUnavailable, "not ready: the cluster's Redis is unreachable",
                        headers: ["Access-Control-Allow-Origin": corsOrigin, "Retry-After": "1"])
        case "/metrics":
            return await metrics.respond()
        default:
            let file = await files.respond(method: method, rawPath: path, requestHeaders: request.head.headers)
            return HTTPResponse(status: file.status, headers: file.headers, body: file.body)
        }
    }

    /// `/state/<rest>` or `/events/<rest>`, with the raw remainder after the prefix.
    static func channelRoute(_ path: String) -> (Channel, Substring)? {
        if path.hasPrefix("/state/") { return (.state, path.dropFirst("/state/".count)) }
        if path.hasPrefix("/events/") { return (.events, path.dropFirst("/events/".count)) }
        if path == "/state" || path == "/events" { return (path == "/state" ? .state : .events, "") }
        return nil
    }

    private func text(_ status: HTTPStatus, _ line: String) -> HTTPResponse {
        .text(status, line, headers: ["Access-Control-Allow-Origin": corsOrigin])
    }

    private func notAllowed(_ allow: String) -> HTTPResponse {
        var headers: HTTPHeaders = ["Allow": allow]
        headers.add(name: "Access-Control-Allow-Origin", value: corsOrigin)
        return .text(.methodNotAllowed, "method not allowed; allowed: \(allow)", headers: headers)
    }

    /// Answers a CORS preflight (and a plain `OPTIONS`).
    private func preflight(allow: String) -> HTTPResponse {
        var headers: HTTPHeaders = ["Allow": allow]
        headers.add(name: "Access-Control-Allow-Origin", value: corsOrigin)
        headers.add(name: "Access-Control-Allow-Methods", value: allow)
        headers.add(name: "Access-Control-Allow-Headers", value: "Authorization, Content-Type, Last-Event-ID")
        headers.add(name: "Access-Control-Max-Age", value: "86400")
        return HTTPResponse(status: .noContent, headers: headers)
    }
}
