import Foundation
import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// CORS headers, `OPTIONS` preflights, and `HEAD` on a channel, over real sockets.
struct CORSAndHeadTests {
    /// Subscriptions, publishes and publish errors carry `Access-Control-Allow-Origin: *` by default.
    @Test(arguments: Transport.allCases)
    func defaultOriginIsStar(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/x", headers: [("Origin", "https://a.example")])
            defer { stream.close() }
            #expect(stream.head.headers["Access-Control-Allow-Origin"] == "*")
            let state = try await gateway.subscribe("/state/x")
            defer { state.close() }
            #expect(state.head.headers["Access-Control-Allow-Origin"] == "*")
            let publish = try await gateway.post("/events/x", "v", headers: [("Origin", "https://a.example")])
            #expect(publish.status == 200)
            #expect(publish.head.headers["Access-Control-Allow-Origin"] == "*")
            let refused = try await gateway.post("/events/a//b", "v")
            #expect(refused.status == 400)
            #expect(refused.head.headers["Access-Control-Allow-Origin"] == "*")
        }
    }

    /// A configured origin replaces `*` on subscriptions, publishes, errors (those of the HTTP layer too) and
    /// preflights, in process and in the real executable alike.
    @Test(arguments: GatewayRun.allCases, Transport.allCases)
    func configuredOriginIsSent(_ run: GatewayRun, _ transport: Transport) async throws {
        let origin = "https://example.com"
        try await withGateway(run, over: transport, arguments: ["--cors-origin", origin, "--max-body", "8"]) { gateway in
            let stream = try await gateway.subscribe("/events/x")
            defer { stream.close() }
            #expect(stream.head.headers["Access-Control-Allow-Origin"] == origin)
            let publish = try await gateway.post("/state/x", "v")
            #expect(publish.head.headers["Access-Control-Allow-Origin"] == origin)
            let badTopic = try await gateway.post("/state/%2e%2e", "v")
            #expect(badTopic.status == 400 && badTopic.head.headers["Access-Control-Allow-Origin"] == origin)
            let tooLarge = try await gateway.post("/state/x", "123456789")
            #expect(tooLarge.status == 413 && tooLarge.head.headers["Access-Control-Allow-Origin"] == origin,
                    "a browser must be able to read why its publish was refused")
            let preflight = try await gateway.send("OPTIONS", "/events/x")
            #expect(preflight.head.headers["Access-Control-Allow-Origin"] == origin)
        }
    }

    /// `OPTIONS` on a channel is a 204 preflight allowing GET, POST and the `Last-Event-ID`, `Authorization`, `Content-Type` headers, token or not.
    @Test(arguments: Transport.allCases)
    func preflightIsAnswered(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.publishToken = "t" }) { gateway in
            let client = try await gateway.connect()
            defer { client.close() }
            for target in ["/events/x", "/state/a/b"] {
                try await client.request("OPTIONS", target, headers: [
                    ("Origin", "https://a.example"),
                    ("Access-Control-Request-Method", "POST"),
                    ("Access-Control-Request-Headers", "authorization, last-event-id, content-type"),
                ])
                let response = try await client.response(deadline: .now + patience)
                #expect(response.status == 204, "\(target): \(response.summary)")
                #expect(response.body.isEmpty)
                #expect(response.head.headers["Access-Control-Allow-Origin"] == "*")
                let methods = response.head.headers["Access-Control-Allow-Methods"]?.lowercased() ?? ""
                #expect(methods.contains("get") && methods.contains("post"), "methods: \(methods)")
                let allowed = (response.head.headers["Access-Control-Allow-Headers"] ?? "").lowercased()
                    .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                for header in ["last-event-id", "authorization", "content-type"] {
                    #expect(allowed.contains(header), "\(target): \(header) not in \(allowed)")
                }
            }
            // 204 has no body: the same connection serves the next request.
            try await client.request("GET", "/healthz")
            #expect(try await client.response(deadline: .now + patience).status == 200)
        }
    }

    /// `HEAD` on a channel answers the SSE headers (no false `Content-Length`) without subscribing, and the connection serves the next request.
    @Test(arguments: Transport.allCases)
    func headOnAChannelOpensNoStream(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let client = try await gateway.connect()
            defer { client.close() }
            for target in ["/events/h", "/state/h"] {
                try await client.request("HEAD", target)
                let response = try await client.response(deadline: .now + patience, requestWasHead: true)
                #expect(response.status == 200)
                #expect(response.head.headers["Content-Type"] == "text/event-stream")
                #expect(response.head.headers["Cache-Control"] == "no-cache")
                #expect(response.head.headers["X-Accel-Buffering"] == "no")
                #expect(response.head.headers["Access-Control-Allow-Origin"] == "*")
                #expect(response.head.headers["Content-Length"] == nil,
                        "a GET of a stream has no length, so a HEAD must not claim one")
            }
            let metrics = try await gateway.metrics()
            #expect(metrics["sse_gateway_subscribers{channel=\"events\"}"] == 0)
            #expect(metrics["sse_gateway_subscribers{channel=\"state\"}"] == 0)
            let reply = try await gateway.post("/events/h", "v")
            #expect(reply.text.contains(#""subscribers":0"#), "\(reply.summary)")
            try await client.request("GET", "/healthz")
            let next = try await client.response(deadline: .now + patience)
            #expect(next.status == 200 && next.text.hasPrefix("ok"), "\(next.summary)")
        }
    }

    /// `HEAD` with a bad topic is refused like `GET` (400).
    @Test(arguments: Transport.allCases)
    func headWithBadTopicIs400(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let response = try await gateway.send("HEAD", "/events/a//b")
            #expect(response.status == 400)
        }
    }
}
