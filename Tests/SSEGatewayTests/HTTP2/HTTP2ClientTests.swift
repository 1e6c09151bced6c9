import Foundation
import Glibc
import Testing
import TestSupport

/// HTTP/2 with the clients of Debian's nghttp2-client (`nghttp`, `h2load`) and a Python
/// HTTP/2 client (hyper-h2, `Tests/http2/h2probe.py`) for the protocol's edge cases:
/// resets, slow streams, many streams, and each abuse the gateway refuses with a GOAWAY.
@Suite(.serialized)
struct HTTP2ClientTests {
    static let probe = packageRoot + "/Tests/http2/h2probe.py"

    /// Every scenario of h2probe.py holds: a preface that arrives a byte at a time is
    /// still HTTP/2, and HTTP/1.1 requests whose first read is one byte (`G`, or `P` as
    /// the preface starts) are still served; a reset stream leaves the hub while its
    /// connection goes on; a stream whose window stays closed is cut as a slow subscriber
    /// while another keeps receiving; 100 streams on one connection all receive; a request
    /// whose body stalls is answered `408` on its stream and the connection goes on, one
    /// whose header block stalls ends the connection with a GOAWAY; rapid
    /// reset, CONTINUATION flood, HPACK bomb, an oversized header list, too many streams,
    /// SETTINGS and PING floods each get their GOAWAY code, a closed connection and a count
    /// in `sse_gateway_http2_goaways_total{reason}`, and the gateway keeps serving.
    @Test(arguments: Transport.allCases)
    func protocolEdgeCases(_ transport: Transport) async throws {
        let scenarios = ["preface-byte-by-byte", "http11-byte-by-byte", "rst-leaves-hub", "slow-stream", "many-streams", "stalled-body", "stalled-headers", "rapid-reset", "continuation-flood",
                         "hpack-bomb", "header-list-too-large", "too-many-streams", "settings-flood", "ping-flood"]
        try await withGatewayProcess(["--events-queue-limit", "16", "--body-timeout", "1s"], over: transport) { gateway in
            let tls = transport == .tls ? ["--tls", TestCertificates.shared.caCertificate] : []
            for scenario in scenarios {
                let run = try await runToExit("/usr/bin/env", ["python3", Self.probe, scenario, "\(gateway.port)"] + tls,
                                              upTo: 60)
                #expect(run.ending == .exit(0) && run.stdout.hasSuffix("ok\n"),
                        "\(scenario): \(run.stdout) \(run.stderr)")
            }
        }
    }

    /// h2load publishes 2,000 values over 4 connections of 20 concurrent streams each: every one answered `200`.
    @Test(arguments: Transport.allCases)
    func h2loadPublishes(_ transport: Transport) async throws {
        let body = FileManager.default.temporaryDirectory.appendingPathComponent("h2load-\(getpid())").path
        #expect(FileManager.default.createFile(atPath: body, contents: Data("a value".utf8)))
        defer { try? FileManager.default.removeItem(atPath: body) }
        try await withGatewayProcess(over: transport) { gateway in
            let scheme = transport == .tls ? "https" : "http"
            let run = try await runToExit("/usr/bin/env", ["h2load", "-n", "2000", "-c", "4", "-m", "20", "-d", body,
                                                           "\(scheme)://127.0.0.1:\(gateway.port)/events/load"], upTo: 60)
            #expect(run.stdout.contains("2000 succeeded, 0 failed"), "\(run.stdout) \(run.stderr)")
            #expect(run.stdout.contains("status codes: 2000 2xx"), "\(run.stdout)")
            #expect(try await gateway.metrics()[#"sse_gateway_publishes_total{channel="events"}"#] == 2000)
        }
    }

    /// `nghttp` follows a stream over TLS (ALPN h2); on SIGTERM the gateway sends GOAWAY
    /// (NO_ERROR) first, then ends the stream, and exits 0.
    @Test func shutdownSendsGoAwayFirst() async throws {
        let gateway = try await GatewayProcess.start(over: .tls)
        let client = try ChildProcess("/usr/bin/env", ["nghttp", "-v", "--no-verify-peer",
                                                        "https://127.0.0.1:\(gateway.port)/events/bye"])
        do {
            _ = await client.stdout.wait(upTo: 10) { $0.contains("retry: 2000") }
            #expect(try await gateway.waitForMetric(#"sse_gateway_subscribers{channel="events"}"#, toBe: 1, within: 5) == 1)
            gateway.child.send(SIGTERM)
            #expect(await gateway.child.waitForExit(upTo: 10) == .exit(0))
            _ = await client.waitForExit(upTo: 10)
            let output = await client.stdout.finish(upTo: 5)
            let goAway = output.range(of: "recv GOAWAY")
            let end = output.range(of: "END_STREAM", options: .backwards)
            #expect(goAway != nil && output.contains("error_code=NO_ERROR"), "\(output)")
            if let goAway, let end { #expect(goAway.lowerBound < end.lowerBound, "\(output)") }
        } catch {
            await client.stop()
            await gateway.child.stop()
            throw error
        }
        await client.stop()
        await gateway.child.stop()
    }
}
