import Foundation
import Testing
import TestSupport

/// The over-cap refusal to a client that speaks HTTP/2 is HTTP/2 (as nginx answers
/// `limit_conn` over HTTP/2): the `503` with `Retry-After` and its one-line reason on
/// the client's first stream, then `GOAWAY` (`NO_ERROR`, the reason as debug data);
/// an HTTP/1.1 client over the cap still gets the text `503`.
@Suite(.serialized)
struct HTTP2RefusalTests {
    /// With `--max-connections-per-ip 1` and one stream held: curl (prior knowledge, or
    /// ALPN `h2` over TLS) reads `HTTP/2 503`, `retry-after` and the reason; nghttp sees
    /// the 503 on its stream and a `GOAWAY` with `NO_ERROR`; curl over HTTP/1.1 `HTTP/1.1 503`;
    /// all three counted as refused.
    @Test(arguments: Transport.allCases)
    func overCapRefusalSpeaksHTTP2(_ transport: Transport) async throws {
        try await withGatewayProcess(["--max-connections-per-ip", "1"], over: transport) { gateway in
            let held = try await gateway.subscribe("/events/cap")
            let h2 = CurlAnswer(try await gateway.curl(.http2, ["-si", "/healthz"]))
            #expect(h2.version == "HTTP/2" && h2.status == 503, "\(h2)")
            #expect(h2.fields.contains("retry-after: 1"), "\(h2)")
            #expect(h2.body == "too many connections from your address, retry later\n", "\(h2)")

            let url = (transport == .tls ? "https://127.0.0.1:" : "http://127.0.0.1:") + "\(gateway.port)/healthz"
            let nghttp = try await runToExit("/usr/bin/env", ["nghttp", "-v"] + (transport == .tls ? ["--no-verify-peer"] : [])
                                             + [url], upTo: 20)
            #expect(nghttp.stdout.contains(":status: 503"), "\(nghttp.stdout)")
            #expect(nghttp.stdout.contains("recv GOAWAY") && nghttp.stdout.contains("error_code=NO_ERROR"), "\(nghttp.stdout)")
            #expect(nghttp.stdout.contains("too many connections from your address"), "\(nghttp.stdout)")

            let h1 = CurlAnswer(try await gateway.curl(.http1, ["-si", "/healthz"]))
            #expect(h1.version == "HTTP/1.1" && h1.status == 503, "\(h1)")
            held.close()
            // At least the three: a scrape that comes before the server let go of the held
            // stream is refused (and counted) too.
            let refused = #"sse_gateway_connections_refused_total{reason="per_ip"}"#
            var counted: Double?
            _ = try await eventually(upTo: 10, every: .milliseconds(50)) {
                counted = try await gateway.metrics()[refused]
                return counted != nil
            }
            #expect((counted ?? 0) >= 3, "\(String(describing: counted))")
        }
    }
}
