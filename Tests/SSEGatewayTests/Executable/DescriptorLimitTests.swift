import Foundation
import Glibc
import HTTPCore
import StreamHub
import Testing
import TestSupport

/// The executable at its real limits: the open-descriptor limit and the connection cap.
@Suite(.serialized)
struct DescriptorLimitTests {
    /// Under `ulimit -n 128` the gateway stops accepting before descriptors run out, stays alive, keeps feeding its open streams, backs off (counted, logged), and accepts again once some streams close.
    @Test func exhaustedDescriptorsBackOffAndRecover() async throws {
        // No connection cap: the descriptors run out first.
        try await withGatewayProcess(["--max-connections", "10000"], descriptorLimit: 128) { gateway in
            #expect(gateway.child.stderr.text.contains("open-file limit 128"), "\(gateway.child.stderr.text)")
            // Opened first, to publish and read metrics while no new connection is accepted.
            let control = try await HTTPClient.connect(port: gateway.port, deadline: .now + .seconds(10))
            defer { control.close() }
            try await control.request("GET", "/healthz")
            #expect(try await control.response(deadline: .now + .seconds(10)).status == 200)

            // Subscribe until one gets no response head: the kernel completed its
            // handshake, but the gateway has no descriptor to accept it with.
            var streams: [SSETestClient] = []
            defer { for stream in streams { stream.close() } }
            var waiting: SSETestClient?
            for _ in 0..<200 where waiting == nil {
                let (stream, quickHead) = try await SSETestClient.connect(port: gateway.port, target: "/events/fd", headWithin: 2)
                var head = quickHead
                // No head yet: out of descriptors (then a back-off was counted), or only slow.
                if head == nil, try await backoffs(via: control) == 0 {
                    head = try await stream.waitForHead(upTo: 10)
                }
                if let head {
                    #expect(head.status == 200)
                    streams.append(stream)
                } else {
                    waiting = stream
                }
            }
            guard let waiting else {
                Issue.record("200 subscribers were all accepted under a limit of 128 descriptors")
                return
            }
            defer { waiting.close() }
            // The gateway keeps a reserve of descriptors free (see HTTPServer.descriptorReserve).
            #expect(streams.count > 32 && streams.count < 128, "\(streams.count) streams accepted")

            // (a) The open streams are still served.
            try await control.request("POST", "/events/fd", body: Array("still here".utf8))
            let reply = try await control.response(deadline: .now + .seconds(10))
            #expect(reply.status == 200)
            #expect(reply.text == #"{"id":"1","subscribers":\#(streams.count)}"# + "\n")
            for stream in streams {
                #expect(try await stream.next() == SSEEvent(id: "1", event: nil, data: "still here"))
            }

            // (b) Closing some streams frees descriptors: the waiting client is
            // accepted, and a new connection is served.
            for stream in streams.prefix(20) { stream.close() }
            streams.removeFirst(20)
            #expect(try await waiting.waitForHead(upTo: 10)?.status == 200)
            #expect(try await gateway.send("GET", "/healthz", within: 10).status == 200)

            // (c) Alive, and the back-off was counted and logged.
            #expect(gateway.child.isRunning)
            let metrics = try await metrics(via: control)
            #expect((metrics["sse_gateway_accept_backoffs_total"] ?? 0) > 0)
            #expect(metrics["sse_gateway_open_files_limit"] == 128)
            #expect(gateway.child.stderr.text.contains("backing off"), "\(gateway.child.stderr.text)")

            // Still a graceful stop with every remaining stream open.
            gateway.child.send(SIGTERM)
            #expect(await gateway.child.waitForExit(upTo: 10) == .exit(0))
            let took = try #require(gateway.child.timeFromSignalToExit)
            #expect(took < .seconds(2), "exit took \(took)")
        }
    }

    /// With `--max-connections 5` the sixth client gets `503` with `Retry-After` and is closed, the refusal is counted, and a freed slot is usable again.
    @Test(arguments: Transport.allCases)
    func connectionCapAnswers503(_ transport: Transport) async throws {
        try await withGatewayProcess(["--max-connections", "5"], over: transport) { gateway in
            let control = try await gateway.connect()
            defer { control.close() }
            try await control.request("GET", "/healthz")
            #expect(try await control.response(deadline: .now + .seconds(10)).status == 200)
            var streams: [SSETestClient] = []
            defer { for stream in streams { stream.close() } }
            for _ in 0..<4 {
                let (stream, head) = try await gateway.openStream("/events/cap")
                streams.append(stream)
                #expect(head?.status == 200)
            }

            let refused = try await gateway.send("GET", "/healthz")
            #expect(refused.status == 503)
            #expect(refused.head.headers["Retry-After"].flatMap { Int($0) } != nil)
            #expect(refused.head.headers["Connection"] == "close")

            #expect(try await metrics(via: control)["sse_gateway_connections_refused_total{reason=\"max_connections\"}"] == 1)

            // One stream leaves: its slot serves a new client.
            streams.removeFirst().close()
            #expect(try await eventually(upTo: 10, every: .milliseconds(25)) {
                guard try await metrics(via: control)["sse_gateway_connections"] == 4 else { return false }
                return try await gateway.send("GET", "/healthz").status == 200
            })
        }
    }

    /// `/metrics` over an open keep-alive connection (a new one may not be accepted).
    private func metrics(via control: HTTPClient) async throws -> [String: Double] {
        try await control.request("GET", "/metrics")
        return MetricsText.parse(try await control.response(deadline: .now + .seconds(10)).text)
    }

    private func backoffs(via control: HTTPClient) async throws -> Double {
        try await metrics(via: control)["sse_gateway_accept_backoffs_total"] ?? 0
    }
}
