import Foundation
import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// API.md's publishing errors over real sockets: each gets its status and a
/// one-line plain-text reason, and changes nothing (the next good publish still
/// gets the next id; a subscriber sees only that one).
struct PublishErrorTests {
    /// Raw topic paths API.md refuses: empty, empty/dot segments (plain and encoded), `%2F`, bad characters.
    static let badTopics = [
        "", "a//b", "/a/b", "a/b/", ".", "..", "a/./b", "a/../b", "%2e%2e", "a/%2E%2e/b", "a/%2e/b",
        "a%2Fb", "a%2fb", "a%20b", "a!b", "a:b", "a@b", "a*b", "caf%C3%A9", "a%00b", "a%zzb", "a%2", "%2541",
        String(repeating: "a", count: 201), String(repeating: "a/", count: 100) + "ab",
    ]

    /// Bad topics get 400 with a one-line reason on GET and POST of both channels, subscribe to nothing and publish nowhere.
    @Test(arguments: Transport.allCases)
    func badTopicsAreRefusedOnGetAndPost(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let watcher = try await gateway.subscribe("/events/a/b")
            defer { watcher.close() }
            for topic in Self.badTopics {
                for channel in ["/events/", "/state/"] {
                    let get = try await gateway.send("GET", channel + topic)
                    expectRefusal(get, 400, "GET \(channel)\(topic)")
                    expectRefusal(try await gateway.post(channel + topic, "bad"), 400, "POST \(channel)\(topic)")
                }
            }
            for bare in ["/events", "/state"] {
                expectRefusal(try await gateway.post(bare, "bad"), 400, "POST \(bare)")
            }
            let metrics = try await gateway.metrics()
            #expect(metrics["sse_gateway_publishes_total{channel=\"events\"}"] == 0)
            #expect(metrics["sse_gateway_publishes_total{channel=\"state\"}"] == 0)
            #expect(metrics["sse_gateway_subscribers{channel=\"events\"}"] == 1)
            #expect(metrics["sse_gateway_subscribers{channel=\"state\"}"] == 0)
            #expect(try await gateway.publish("/events/a/b", "ok") == 1)
            try await gateway.expectFirstEvent(watcher, id: "1", data: "ok")
        }
    }

    /// A topic of exactly 200 bytes (slashes included) is accepted on GET and POST.
    @Test(arguments: Transport.allCases)
    func twoHundredByteTopicIsAccepted(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let topic = String(repeating: "ab/", count: 66) + "ab"
            #expect(topic.utf8.count == 200)
            let stream = try await gateway.subscribe("/events/" + topic)
            defer { stream.close() }
            #expect(stream.head.status == 200)
            #expect(try await gateway.publish("/events/" + topic, "long") == 1)
            try await gateway.expectFirstEvent(stream, id: "1", data: "long")
        }
    }

    /// Topic names are case-sensitive: `Room` and `room` are different topics, each with its own ids.
    @Test(arguments: Transport.allCases)
    func topicNamesAreCaseSensitive(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let lower = try await gateway.subscribe("/events/room")
            defer { lower.close() }
            #expect(try await gateway.publish("/events/Room", "upper") == 1)
            #expect(try await gateway.publish("/events/room", "lower") == 1)
            try await gateway.expectFirstEvent(lower, id: "1", data: "lower")
        }
    }

    /// A bad `?event=` name (or a malformed query) gets 400 and publishes nothing; a good name types the SSE event.
    @Test(arguments: Transport.allCases)
    func badEventNamesAreRefused(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/ev")
            defer { stream.close() }
            let bad = ["", "a/b", "a%2Fb", ".", "..", "%2e%2e", "a%20b", "a+b", "a%0Ab", "a%0D%0Adata:x", "a:b",
                       "caf%C3%A9", "a%zz", "%2541", String(repeating: "e", count: 201)]
            for name in bad {
                for channel in ["/events/ev", "/state/ev"] {
                    let response = try await gateway.post("\(channel)?event=\(name)", "bad")
                    expectRefusal(response, 400, "event=\(name) on \(channel)")
                }
            }
            #expect(try await gateway.publish("/events/ev?event=tick", "ok") == 1)
            try await gateway.expectFirstEvent(stream, id: "1", data: "ok", event: "tick")
        }
    }

    /// A body that is not UTF-8 gets 400 and changes nothing, on both channels.
    @Test(arguments: Transport.allCases)
    func nonUTF8BodyIsRefused(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let events = try await gateway.subscribe("/events/u")
            let state = try await gateway.subscribe("/state/u")
            defer { events.close(); state.close() }
            let bodies: [[UInt8]] = [[0xFF], [0x61, 0xC3], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0x61, 0x80, 0x62]]
            for body in bodies {
                for channel in ["/events/u", "/state/u"] {
                    expectRefusal(try await gateway.send("POST", channel, body: body), 400, "\(body) on \(channel)")
                }
            }
            #expect(try await gateway.publish("/events/u", "é") == 1)
            #expect(try await gateway.publish("/state/u", "ü") == 1)
            try await gateway.expectFirstEvent(events, id: "1", data: "é")
            try await gateway.expectFirstEvent(state, id: "1", data: "ü")
        }
    }

    /// A body over the limit gets 413 and a closed connection (Content-Length, chunked, or announced with `Expect` and refused before a `100`); exactly the limit is published.
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: Content-Length, chunked and Expect framing sent raw; over HTTP/2 HTTP2RouteTests.oversizedBodyIsRefusedTheSame"), arguments: Transport.allCases)
    func bodyOverTheLimitIs413(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.maxBodyBytes = 16 }) { gateway in
            let stream = try await gateway.subscribe("/events/big")
            defer { stream.close() }
            let over = String(repeating: "x", count: 17)
            let length = try await gateway.exchange(
                "POST /events/big HTTP/1.1\r\nHost: x\r\nContent-Length: 17\r\n\r\n\(over)")
            expectRefusal(length.response, 413, "Content-Length")
            #expect(length.closed)
            let chunked = try await gateway.exchange(
                "POST /events/big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                + "10\r\n\(String(repeating: "y", count: 16))\r\n1\r\nz\r\n0\r\n\r\n")
            expectRefusal(chunked.response, 413, "chunked")
            #expect(chunked.closed)
            let large = try await gateway.exchange(
                "POST /events/big HTTP/1.1\r\nHost: x\r\nContent-Length: 65536\r\n\r\n"
                + String(repeating: "w", count: 65536))
            expectRefusal(large.response, 413, "64 KiB body")
            #expect(large.closed)

            let client = try await gateway.connect(
                sending: "POST /events/big HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\nExpect: 100-continue\r\n\r\n")
            defer { client.close() }
            let announced = try await client.response(deadline: .now + patience, keepInterim: true)
            expectRefusal(announced, 413, "Expect: 100-continue")
            #expect(await client.isClosedByServer())

            #expect(try await gateway.publish("/events/big", String(repeating: "k", count: 16)) == 1)
            try await gateway.expectFirstEvent(stream, id: "1", data: String(repeating: "k", count: 16))
        }
    }

    /// A POST with neither Content-Length nor chunked encoding gets 411, publishes nothing, and is closed (bytes after it are never read as a request).
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: a body without framing exists only in HTTP/1.1 (HTTP/2's END_STREAM frames every body)"), arguments: Transport.allCases)
    func postWithoutLengthIs411(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/state/len")
            defer { stream.close() }
            for target in ["/state/len", "/events/len"] {
                let bare = try await gateway.exchange("POST \(target) HTTP/1.1\r\nHost: x\r\n\r\n")
                expectRefusal(bare.response, 411, "no body")
                #expect(bare.closed, "411 left the connection open")
                let withBody = try await gateway.exchange("POST \(target) HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
                expectRefusal(withBody.response, 411, "unframed body")
                #expect(withBody.closed, "bytes after a 411 were served as a request")
            }
            #expect(try await gateway.publish("/state/len", "v") == 1)
            try await gateway.expectFirstEvent(stream, id: "1", data: "v")
        }
    }

    /// PUT, DELETE and PATCH get 405 with `Allow` on channels and on other paths, and publish nothing.
    @Test(arguments: Transport.allCases)
    func otherMethodsAre405WithAllow(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/m")
            defer { stream.close() }
            for method in ["PUT", "DELETE", "PATCH"] {
                for target in ["/events/m", "/state/m"] {
                    let response = try await gateway.send(method, target, body: Array("x".utf8))
                    expectRefusal(response, 405, "\(method) \(target)")
                    let allow = response.head.headers["Allow"] ?? ""
                    #expect(allow.contains("GET") && allow.contains("POST"), "\(method) \(target): Allow \(allow)")
                }
                for target in ["/", "/healthz", "/metrics", "/index.html"] {
                    let response = try await gateway.send(method, target)
                    expectRefusal(response, 405, "\(method) \(target)")
                    let allow = response.head.headers["Allow"] ?? ""
                    #expect(allow.contains("GET") && !allow.contains("POST"), "\(method) \(target): Allow \(allow)")
                }
            }
            #expect(try await gateway.publish("/events/m", "after") == 1)
            try await gateway.expectFirstEvent(stream, id: "1", data: "after")
        }
    }

    /// With a publish token, POSTs without the right `Authorization: Bearer` get 401 and change nothing; the right one publishes; GETs need none.
    @Test(arguments: Transport.allCases)
    func publishTokenIsRequired(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.publishToken = "s3cret-token" }) { gateway in
            let events = try await gateway.subscribe("/events/t")
            let state = try await gateway.subscribe("/state/t")
            defer { events.close(); state.close() }
            #expect(events.head.status == 200 && state.head.status == 200)
            let wrong: [[(String, String)]] = [
                [], [("Authorization", "Bearer")], [("Authorization", "Bearer ")], [("Authorization", "Bearer s3cret")],
                [("Authorization", "Bearer s3cret-token2")], [("Authorization", "Bearer S3CRET-TOKEN")],
                [("Authorization", "Basic s3cret-token")], [("Authorization", "s3cret-token")],
            ]
            for headers in wrong {
                for channel in ["/events/t", "/state/t"] {
                    let response = try await gateway.post(channel, "nope", headers: headers)
                    expectRefusal(response, 401, "\(headers) on \(channel)")
                }
            }
            let right = [("Authorization", "Bearer s3cret-token")]
            #expect(try await gateway.publish("/events/t", "yes", headers: right) == 1)
            #expect(try await gateway.publish("/state/t", "yes", headers: right) == 1)
            try await gateway.expectFirstEvent(events, id: "1", data: "yes")
            try await gateway.expectFirstEvent(state, id: "1", data: "yes")
        }
    }
}
