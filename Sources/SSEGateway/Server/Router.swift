import GatewayAPI
import HTTPCore
import StreamHub

/// Hands a request to the handler its `Route` names (the table itself is
/// `GatewayAPI.Route`). Answers what the handlers mean; the gateway's
/// `ResponsePolicy` finishes every reply after it.
struct Router: Sendable {
    let subscribe: SubscribeHandler
    let publish: PublishHandler
    let metrics: MetricsHandler
    let files: StaticFiles

    /// Runs on the caller's executor (the connection's loop): no executor switch per request.
    nonisolated(nonsending) func respond(to request: HTTPRequest) async -> Reply {
        switch Route.match(method: request.head.method, rawPath: request.head.rawPath, query: request.head.query) {
        case .subscribe(let channel, let topic):
            return await subscribe.respond(to: request, channel: channel, slots: .single(topic))
        case .subscribeTopics(let channel, let topics):
            return await subscribe.respond(to: request, channel: channel, slots: .tagged(topics))
        case .badTopics(let problem):
            return .refused(.badRequest, problem.reason)
        case .publish(let channel, let topic):
            return await publish.respond(to: request, channel: channel, topic: topic)
        case .preflight(let allow):
            return ResponsePolicy.preflight(allow: allow)
        case .methodNotAllowed(let allow):
            return .refused(.methodNotAllowed, "method not allowed; allowed: \(allow)", headers: ["Allow": allow])
        case .badTopic(let error):
            return .refused(.badRequest, error.reason)
        case .health:
            return .response(.text(.ok, "ok"))
        case .ready:
            // Not ready from the first stop request on (a load balancer should stop sending clients).
            guard subscribe.drain.isReady else {
                return .refused(.serviceUnavailable, "not ready: stopping (draining)", headers: ["Retry-After": "1"])
            }
            // Ready to take publishes and new subscriptions (false while a cluster's Redis is unreachable).
            // Ready: a publish and a new subscription would be served now; else the reason.
            guard let reason = subscribe.engine.notReadyReason else { return .response(.text(.ok, "ready")) }
            return .refused(.serviceUnavailable, "not ready: \(reason)", headers: ["Retry-After": "1"])
        case .metrics:
            return .response(await metrics.respond())
        case .file:
            return await files.respond(method: request.head.method, rawPath: request.head.rawPath,
                                       requestHeaders: request.head.headers)
        }
    }
}
