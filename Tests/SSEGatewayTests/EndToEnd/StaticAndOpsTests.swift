import Foundation
import HTTPCore
import StreamHub
import Synchronization
import Testing
import TestSupport
@testable import SSEGateway

/// Static files, `/healthz` and `/metrics` through the gateway over real sockets.
struct StaticAndOpsTests {
    /// `GET /` serves `public/index.html` as `text/html`, byte for byte.
    @Test(arguments: Transport.allCases)
    func rootServesTheIndexPage(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let response = try await gateway.send("GET", "/")
            #expect(response.status == 200)
            #expect(response.head.headers["Content-Type"]?.hasPrefix("text/html") == true)
            let file = try Data(contentsOf: URL(fileURLWithPath: packageRoot + "/public/index.html"))
            #expect(response.body == Array(file))
            #expect(response.head.headers["Content-Length"] == "\(file.count)")
        }
    }

    /// `HEAD /` answers the same headers as `GET /` and no body (the connection then serves the next request).
    @Test(arguments: Transport.allCases)
    func headOfRootHasTheHeadersAndNoBody(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let get = try await gateway.send("GET", "/")
            let client = try await gateway.connect()
            defer { client.close() }
            try await client.request("HEAD", "/")
            let head = try await client.response(deadline: .now + patience, requestWasHead: true)
            #expect(head.status == 200)
            for name in ["Content-Type", "Content-Length", "ETag", "Last-Modified", "Cache-Control"] {
                #expect(head.head.headers[name] != nil && head.head.headers[name] == get.head.headers[name], "\(name)")
            }
            try await client.request("GET", "/healthz")
            let next = try await client.response(deadline: .now + patience)
            #expect(next.status == 200 && next.text.hasPrefix("ok"), "a body followed the HEAD answer: \(next.summary)")
        }
    }

    /// The page's script and stylesheet are served with their content types.
    @Test(arguments: Transport.allCases)
    func assetsHaveTheirContentTypes(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let script = try await gateway.send("GET", "/app.js")
            #expect(script.status == 200)
            #expect(script.head.headers["Content-Type"]?.hasPrefix("text/javascript") == true)
            let style = try await gateway.send("GET", "/style.css")
            #expect(style.status == 200)
            #expect(style.head.headers["Content-Type"]?.hasPrefix("text/css") == true)
            #expect(try await gateway.send("GET", "/missing.html").status == 404)
        }
    }

    /// Paths that leave `public/` (`..` plain or percent-encoded in any case, encoded slashes) get 404.
    @Test(arguments: Transport.allCases)
    func traversalAttemptsAre404(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            #expect(try await gateway.send("GET", "/index.html").status == 200)
            let attempts = [
                "/../Package.swift", "/%2e%2e/Package.swift", "/%2E%2e/%2E%2E/etc/passwd", "/a%2fb",
                "/..%2fPackage.swift", "/%2e%2e%2fPackage.swift", "/public/../../Package.swift",
                "/./../Package.swift", "/..", "/%2e%2e", "/../../../../etc/passwd", "/..%5cPackage.swift",
                "http://x/../Package.swift", "/index.html%00.js",
            ]
            for path in attempts {
                let response = try await gateway.send("GET", path)
                #expect(response.status == 404, "\(path): \(response.summary)")
                #expect(!response.text.contains("swift-tools-version") && !response.text.contains("root:"))
            }
        }
    }

    /// A symlink inside the public directory is served when it stays inside, and 404 when it leads out.
    @Test(arguments: Transport.allCases)
    func symlinksLeavingTheDirectoryAre404(_ transport: Transport) async throws {
        let base = NSTemporaryDirectory() + "gateway-static-\(UUID().uuidString)"
        let root = base + "/public"
        let fm = FileManager.default
        try fm.createDirectory(atPath: root + "/sub", withIntermediateDirectories: true)
        defer { try? fm.removeItem(atPath: base) }
        try Data("<p>tmp</p>\n".utf8).write(to: URL(fileURLWithPath: root + "/index.html"))
        try Data("inside\n".utf8).write(to: URL(fileURLWithPath: root + "/sub/inside.txt"))
        try Data("secret\n".utf8).write(to: URL(fileURLWithPath: base + "/secret.txt"))
        try fm.createSymbolicLink(atPath: root + "/in.txt", withDestinationPath: "sub/inside.txt")
        try fm.createSymbolicLink(atPath: root + "/out.txt", withDestinationPath: "../secret.txt")
        try fm.createSymbolicLink(atPath: root + "/up", withDestinationPath: "..")
        try fm.createSymbolicLink(atPath: root + "/etc", withDestinationPath: "/etc")
        try fm.createSymbolicLink(atPath: root + "/abs.txt", withDestinationPath: base + "/secret.txt")

        try await withGateway(over: transport, { $0.publicDirectory = root }) { gateway in
            let index = try await gateway.send("GET", "/")
            #expect(index.status == 200 && index.text == "<p>tmp</p>\n")
            let inside = try await gateway.send("GET", "/in.txt")
            #expect(inside.status == 200 && inside.text == "inside\n")
            for path in ["/out.txt", "/abs.txt", "/up/secret.txt", "/up/", "/etc/passwd", "/etc/hostname", "/etc/"] {
                let response = try await gateway.send("GET", path)
                #expect(response.status == 404, "\(path): \(response.summary)")
                #expect(!response.text.contains("secret"))
            }
        }
    }

    /// `GET /healthz` answers `200 ok` in plain text.
    @Test(arguments: Transport.allCases)
    func healthzAnswersOK(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let response = try await gateway.send("GET", "/healthz")
            #expect(response.status == 200)
            #expect(response.text.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
            #expect(response.head.headers["Content-Type"]?.hasPrefix("text/plain") == true)
        }
    }

    /// `/metrics` is Prometheus text with `# HELP`, `# TYPE` and a sample for every metric API.md lists.
    @Test(arguments: Transport.allCases)
    func metricsExposeEveryListedFamily(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/m")
            defer { stream.close() }
            let response = try await gateway.send("GET", "/metrics")
            #expect(response.status == 200)
            #expect(response.head.headers["Content-Type"]?.hasPrefix("text/plain; version=0.0.4") == true)
            let lines = Set(response.text.split(separator: "\n").map(String.init))
            let families: [(name: String, type: String, samples: [String])] = [
                ("sse_gateway_connections", "gauge", [#"{protocol="http1"}"#, #"{protocol="http2"}"#]),
                ("sse_gateway_http2_streams", "gauge", [""]),
                ("sse_gateway_http2_goaways_total", "counter", [#"{reason="rapid_reset"}"#, #"{reason="shutdown"}"#]),
                ("sse_gateway_subscribers", "gauge", [#"{channel="state"}"#, #"{channel="events"}"#]),
                ("sse_gateway_topics", "gauge", [""]),
                ("sse_gateway_publishes_total", "counter", [#"{channel="state"}"#, #"{channel="events"}"#]),
                ("sse_gateway_events_delivered_total", "counter", [#"{channel="state"}"#, #"{channel="events"}"#]),
                ("sse_gateway_slow_subscriber_disconnects_total", "counter", [""]),
                ("sse_gateway_bytes_written_total", "counter", [""]),
                ("sse_gateway_connections_refused_total", "counter", [#"{reason="max_connections"}"#, #"{reason="per_ip"}"#]),
            ]
            for family in families {
                #expect(lines.contains { $0.hasPrefix("# HELP \(family.name) ") }, "no HELP for \(family.name)")
                #expect(lines.contains("# TYPE \(family.name) \(family.type)"), "no TYPE for \(family.name)")
                for labels in family.samples {
                    let sample = family.name + labels + " "
                    #expect(lines.contains { $0.hasPrefix(sample) && Double($0.dropFirst(sample.count)) != nil },
                            "no sample \(family.name)\(labels)")
                }
            }
            let values = try await gateway.metrics()
            #expect(values["sse_gateway_subscribers{channel=\"events\"}"] == 1)
            #expect(values["sse_gateway_topics"] == 1)
            #expect((values["sse_gateway_connections"] ?? 0) >= 2)
        }
    }

    /// Publishing and delivering move `publishes_total`, `events_delivered_total` and `bytes_written_total`.
    @Test(arguments: Transport.allCases)
    func countersMove(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let events = try await gateway.subscribe("/events/c")
            let state = try await gateway.subscribe("/state/c")
            defer { events.close(); state.close() }
            let before = try await gateway.metrics()
            let bytesBefore = try #require(before["sse_gateway_bytes_written_total"])
            #expect(before["sse_gateway_publishes_total{channel=\"events\"}"] == 0)
            for i in 1...3 { _ = try await gateway.publish("/events/c", "e\(i)") }
            _ = try await gateway.publish("/state/c", "s")
            #expect(try await events.next(3, within: 10).count == 3)
            #expect(try await state.next(within: 10)?.data == "s")
            let after = try await gateway.metrics()
            #expect(after["sse_gateway_publishes_total{channel=\"events\"}"] == 3)
            #expect(after["sse_gateway_publishes_total{channel=\"state\"}"] == 1)
            #expect(try await gateway.waitForMetric("sse_gateway_events_delivered_total{channel=\"events\"}", toBe: 3, within: 10) == 3)
            #expect(try await gateway.waitForMetric("sse_gateway_events_delivered_total{channel=\"state\"}", toBe: 1, within: 10) == 1)
            #expect((after["sse_gateway_bytes_written_total"] ?? 0) > bytesBefore + 4 * 10)
        }
    }

    /// A connection over the cap is refused with 503 and counted in `connections_refused_total`.
    @Test(arguments: Transport.allCases)
    func refusedConnectionsAreCounted(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.maxConnections = 2 }) { gateway in
            let a = try await gateway.subscribe("/events/cap")
            let b = try await gateway.subscribe("/events/cap")
            let extra = try await gateway.connect()
            defer { extra.close() }
            // An HTTP/2 client hears its refusal on its first stream (as from nginx).
            if extra.isHTTP2 { try await extra.request("GET", "/healthz") }
            let refused = try await extra.response(deadline: .now + patience)
            #expect(refused.status == 503)
            #expect(refused.head.headers["Access-Control-Allow-Origin"] == "*")
            a.close()
            b.close()
            // Scrape only once the server let go of all three, so the scrape itself is not over the cap.
            let counters = gateway.gateway.server.counters
            #expect(await eventually(upTo: 10) { counters.open.load(ordering: .relaxed) == 0 })
            #expect(try await gateway.metrics()["sse_gateway_connections_refused_total{reason=\"max_connections\"}"] == 1)
        }
    }
}
