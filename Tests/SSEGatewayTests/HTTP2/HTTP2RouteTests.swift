import Foundation
import Glibc
import Testing
import TestSupport

/// Every route, refusal and header rule answers the same over HTTP/2 as over HTTP/1.1:
/// curl asks each question both ways (cleartext prior knowledge and TLS with ALPN `h2`)
/// and the answers must match in status, fields (less the connection-specific ones and
/// `Date`) and body. The end-to-end suites' own Swift client speaks HTTP/1.1 only; this
/// representative set of their checks runs through curl instead.
@Suite(.serialized)
struct HTTP2RouteTests {
    /// One request: curl arguments; `{p}` in them is replaced by the protocol's name
    /// (a topic of its own, so ids agree).
    static let requests: [(name: String, arguments: [String])] = [
        ("health", ["-si", "/healthz"]),
        ("HEAD health", ["-sI", "/healthz"]),
        ("not found", ["-si", "/no/such/file"]),
        ("static index", ["-si", "/"]),
        ("publish", ["-si", "-X", "POST", "--data-binary", "v1", "/events/{p}"]),
        ("publish with an event name", ["-si", "-X", "POST", "--data-binary", "v", "/state/{p}?event=note"]),
        ("bad event name", ["-si", "-X", "POST", "--data-binary", "v", "/events/{p}?event=b%20d"]),
        ("bad topic", ["-si", "-X", "POST", "--data-binary", "v", "/events/a%00b"]),
        ("method not allowed", ["-si", "-X", "PUT", "/events/{p}"]),
        ("CORS preflight", ["-si", "-X", "OPTIONS", "-H", "Origin: https://app.example",
                            "-H", "Access-Control-Request-Method: POST", "/events/{p}"]),
        ("HEAD of a stream", ["-sI", "/events/{p}"]),
        ("HEAD of a several-topic stream", ["-sI", "/events?topic=a&topic=b"]),
        ("stream refused for a bad topic", ["-si", "/events/a%00b"]),
        ("request target too long", ["-si", "/events/" + String(repeating: "x", count: 9000)]),
        // Streams, cut after a second: the head, the retry line and the current value.
        ("state stream", ["-si", "--max-time", "1", "/state/{p}"]),
        ("several-topic state stream", ["-si", "--max-time", "1", "/state?topic=quiet&topic=other"]),
        ("events stream resumed", ["-si", "--max-time", "1", "-H", "Last-Event-ID: 0", "/events/{p}"]),
    ]

    /// Each request of `requests` gets the same answer over HTTP/2 as over HTTP/1.1, and it really came over HTTP/2.
    @Test(arguments: Transport.allCases)
    func everyRouteAnswersTheSame(_ transport: Transport) async throws {
        try await withGatewayProcess(over: transport) { gateway in
            for (name, arguments) in Self.requests {
                var answers: [HTTPProtocol: CurlAnswer] = [:]
                for p in HTTPProtocol.allCases {
                    let output = try await gateway.curl(p, arguments.map { $0.replacingOccurrences(of: "{p}", with: p.rawValue) })
                    answers[p] = CurlAnswer(output)
                }
                let (one, two) = (answers[.http1]!, answers[.http2]!)
                #expect(two.version == "HTTP/2", "\(name): \(two)")
                #expect(one.status == two.status && one.fields == two.fields && one.body == two.body,
                        "\(name): HTTP/1.1 \(one) but HTTP/2 \(two)")
            }
        }
    }

    /// With a publish token, the refusals (no token, a wrong one) and the acceptance are the same over HTTP/2.
    @Test(arguments: Transport.allCases)
    func publishTokenAnswersTheSame(_ transport: Transport) async throws {
        try await withGatewayProcess(["--publish-token", "s3cret-T0ken"], over: transport) { gateway in
            for (name, headers) in [("no token", [String]()), ("wrong token", ["-H", "Authorization: Bearer nope"]),
                                    ("right token", ["-H", "Authorization: Bearer s3cret-T0ken"])] {
                var answers: [CurlAnswer] = []
                for p in HTTPProtocol.allCases {
                    answers.append(CurlAnswer(try await gateway.curl(p, ["-si", "-X", "POST", "--data-binary", "v"]
                        + headers + ["/events/" + p.rawValue])))
                }
                #expect(answers[0].status == answers[1].status && answers[0].fields == answers[1].fields
                        && answers[0].body == answers[1].body, "\(name): \(answers)")
            }
        }
    }

    /// A body over the limit is refused `413` over HTTP/2 as over HTTP/1.1, and nothing is published.
    @Test(arguments: Transport.allCases)
    func oversizedBodyIsRefusedTheSame(_ transport: Transport) async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("h2-body-\(getpid())").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data(repeating: 0x61, count: 70_000)))
        defer { try? FileManager.default.removeItem(atPath: file) }
        try await withGatewayProcess(over: transport) { gateway in
            var answers: [CurlAnswer] = []
            for p in HTTPProtocol.allCases {
                answers.append(CurlAnswer(try await gateway.curl(p, ["-si", "-X", "POST", "--data-binary", "@" + file,
                                                                  "/events/big"])))
            }
            #expect(answers[0].status == 413 && answers[1].status == 413, "\(answers)")
            #expect(answers[0].body == answers[1].body)
            #expect(try await gateway.metrics()[#"sse_gateway_publishes_total{channel="events"}"#] == 0)
        }
    }

    /// `curl -N --http2` on /events prints the retry line and every event published after it connected;
    /// when curl goes away its subscriber leaves the hub.
    @Test(arguments: Transport.allCases)
    func curlFollowsEventsOverHTTP2(_ transport: Transport) async throws {
        try await withGatewayProcess(over: transport) { gateway in
            let (base, options) = gateway.curlBase
            let subscriber = try ChildProcess("/usr/bin/env", ["curl", "-sN", HTTPProtocol.http2.curlOption(transport)]
                + options + [base + "/events/feed"])
            do {
                _ = await subscriber.stdout.wait(upTo: 10) { $0.hasPrefix("retry: 2000\n\n") }
                for value in ["a", "b", "c"] {
                    _ = try await gateway.curl(.http2, ["-s", "-X", "POST", "--data-binary", value, "/events/feed"])
                }
                let expected = "retry: 2000\n\nid: 1\ndata: a\n\nid: 2\ndata: b\n\nid: 3\ndata: c\n\n"
                _ = await subscriber.stdout.wait(upTo: 10) { $0.count >= expected.count }
                #expect(subscriber.stdout.text == expected)
                #expect(try await gateway.metrics()[#"sse_gateway_connections{protocol="http2"}"#] == 1)
                subscriber.send(SIGTERM)
                #expect(await subscriber.waitForExit(upTo: 10) != nil)
                #expect(try await gateway.waitForMetric(#"sse_gateway_subscribers{channel="events"}"#, toBe: 0, within: 5) == 0)
                #expect(try await gateway.waitForMetric("sse_gateway_http2_streams", toBe: 0, within: 5) == 0)
            } catch {
                await subscriber.stop()
                throw error
            }
            await subscriber.stop()
        }
    }

    /// With `--http2 off` the listener speaks HTTP/1.1 only: ALPN picks `http/1.1`, and a
    /// cleartext HTTP/2 preface gets no HTTP/2 answer.
    @Test(arguments: Transport.allCases)
    func http2OffSpeaksHTTP11Only(_ transport: Transport) async throws {
        try await withGatewayProcess(["--http2", "off"], over: transport) { gateway in
            let (base, options) = gateway.curlBase
            let run = try await runToExit("/usr/bin/env", ["curl", "-si", HTTPProtocol.http2.curlOption(transport)]
                + options + [base + "/healthz"])
            switch transport {
            case .tls: #expect(run.stdout.hasPrefix("HTTP/1.1 200"), "\(run.stdout)")
            case .plain: #expect(!run.stdout.hasPrefix("HTTP/2"), "\(run.stdout)")
            }
            #expect(try await gateway.send("GET", "/healthz").status == 200)
        }
    }
}
