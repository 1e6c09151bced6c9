import Foundation
import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// A successful publish over real sockets: the reply, and the body framings API.md accepts.
struct PublishReplyTests {
    /// A publish answers 200 `application/json` `{"id":"<id>","subscribers":<n>}` with the subscribers of its channel.
    @Test(arguments: Transport.allCases)
    func replyCarriesIdAndSubscriberCount(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            var streams: [SSETestClient] = []
            defer { streams.forEach { $0.close() } }
            for _ in 0..<3 { streams.append(try await gateway.subscribe("/events/r")) }
            for _ in 0..<2 { streams.append(try await gateway.subscribe("/state/r")) }
            streams.append(try await gateway.subscribe("/events/other"))

            let first = try await gateway.post("/events/r", "a")
            #expect(first.status == 200)
            #expect(first.head.headers["Content-Type"] == "application/json")
            #expect(first.text.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"id":"1","subscribers":3}"#)
            let object = try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any]
            #expect(object?["id"] as? String == "1")
            #expect(object?["subscribers"] as? Int == 3)

            let second = try await gateway.post("/events/r", "b")
            #expect(second.text.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"id":"2","subscribers":3}"#)
            let state = try await gateway.post("/state/r", "s")
            #expect(state.text.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"id":"1","subscribers":2}"#)
            let nobody = try await gateway.post("/events/nobody", "n")
            #expect(nobody.text.trimmingCharacters(in: .whitespacesAndNewlines) == #"{"id":"1","subscribers":0}"#)
        }
    }

    /// A chunked POST body (with an extension and a trailer) is accepted and published as the whole value.
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: chunked framing is HTTP/1.1's"), arguments: Transport.allCases)
    func chunkedBodyIsPublished(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/c")
            defer { stream.close() }
            let (response, _) = try await gateway.exchange(
                "POST /events/c?event=chunky HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                + "6\r\nhello \r\n7;ext=1\r\nchunked\r\n0\r\nX-Trailer: t\r\n\r\n")
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.text.contains(#""id":"1""#))
            try await gateway.expectFirstEvent(stream, id: "1", data: "hello chunked", event: "chunky")
        }
    }

    /// `Expect: 100-continue` is answered with `100 Continue` before the body is sent, then the publish reply.
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: a raw HTTP/1.1 Expect: 100-continue exchange"), arguments: Transport.allCases)
    func expectContinueIsAnswered(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/state/x")
            defer { stream.close() }
            let client = try await gateway.connect(
                sending: "POST /state/x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
            defer { client.close() }
            let interim = try await client.response(deadline: .now + patience, keepInterim: true)
            #expect(interim.status == 100)
            try await client.send("later")
            let final = try await client.response(deadline: .now + patience)
            #expect(final.status == 200, "\(final.summary)")
            #expect(final.text.contains(#""id":"1""#))
            try await gateway.expectFirstEvent(stream, id: "1", data: "later")
        }
    }

    /// Two publishes pipelined in one write on a keep-alive connection get consecutive ids in order, and the connection serves a third request.
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: pipelining is HTTP/1.1's (HTTP/2 multiplexes: HTTP2ClientTests)"), arguments: Transport.allCases)
    func pipelinedPublishesOnOneConnection(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/p")
            defer { stream.close() }
            let client = try await gateway.connect(sending:
                "POST /events/p HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\none"
                + "POST /events/p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\ntwo\r\n0\r\n\r\n")
            defer { client.close() }
            let first = try await client.response(deadline: .now + patience)
            let second = try await client.response(deadline: .now + patience)
            #expect(first.text.contains(#""id":"1""#), "\(first.summary)")
            #expect(second.text.contains(#""id":"2""#), "\(second.summary)")
            #expect(first.head.headers["Connection"] == nil && second.head.headers["Connection"] == nil)
            try await client.request("GET", "/healthz")
            #expect(try await client.response(deadline: .now + patience).status == 200)
            #expect(try await stream.next(2, within: 10).map(\.data) == ["one", "two"])
        }
    }

    /// Twenty publishes pipelined in one write, with a refused one among them: the replies
    /// come back in order (ids 1…20, the `400` in its place), all in the first bytes the
    /// client receives (one write), and the subscriber gets the twenty events in order.
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: pipelining is HTTP/1.1's (HTTP/2 multiplexes: HTTP2ClientTests)"), arguments: Transport.allCases)
    func pipelinedPublishesAreAnsweredInOrderInOneWrite(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/burst")
            defer { stream.close() }
            var burst = ""
            for i in 1...20 {
                burst += "POST /events/burst HTTP/1.1\r\nHost: x\r\nContent-Length: \(String(i).utf8.count)\r\n\r\n\(i)"
                if i == 10 { burst += "POST /events/burst?event=no%20spaces HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nx" }
            }
            let client = try await gateway.connect(sending: burst)
            defer { client.close() }
            let first = try await client.connection.read(maxBytes: 1 << 16, deadline: .now + patience)
            var parser = HTTPResponseParser()
            parser.append(first)
            var replies: [(status: Int, body: String)] = []
            var status = 0
            var body: [UInt8] = []
            while let event = try parser.next() {
                switch event {
                case .head(let head): (status, body) = (head.status, [])
                case .body(let part): body += part
                case .end: replies.append((status, String(decoding: body, as: UTF8.self)))
                }
            }
            #expect(replies.count == 21, "replies in the first read: \(replies.count)")
            let ids = replies.filter { $0.status == 200 }.map { $0.body.split(separator: "\"")[3] }
            #expect(ids == (1...20).map { Substring(String($0)) })
            #expect(replies.count == 21 && replies[10].status == 400)
            #expect(try await stream.next(20, within: 10).map(\.data) == (1...20).map(String.init))
        }
    }

    /// An HTTP/1.0 publish is served, answered with `Connection: close`, and the connection closed.
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: HTTP/1.0"), arguments: Transport.allCases)
    func http10PublishIsServedAndClosed(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/old")
            defer { stream.close() }
            let (response, closed) = try await gateway.exchange(
                "POST /events/old HTTP/1.0\r\nContent-Length: 3\r\n\r\nold")
            #expect(response.status == 200, "\(response.summary)")
            #expect(response.head.headers["Connection"]?.lowercased() == "close")
            #expect(closed)
            try await gateway.expectFirstEvent(stream, id: "1", data: "old")
        }
    }

    /// An HTTP/1.0 client is served a plain GET and closed, and can subscribe to a close-delimited SSE stream.
    @Test(.disabled(if: TestHTTP.isHTTP2, "over HTTP/2: HTTP/1.0"), arguments: Transport.allCases)
    func http10ClientsAreServed(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let (health, closed) = try await gateway.exchange("GET /healthz HTTP/1.0\r\n\r\n")
            #expect(health.status == 200 && health.text.hasPrefix("ok"))
            #expect(closed)

            let client = try await gateway.connect(sending: "GET /events/old HTTP/1.0\r\n\r\n")
            defer { client.close() }
            guard case .head(let head)? = try await client.nextEvent(deadline: .now + patience) else {
                Issue.record("no response head")
                return
            }
            #expect(head.status == 200)
            #expect(head.headers["Content-Type"] == "text/event-stream")
            #expect(head.headers["Transfer-Encoding"] == nil, "HTTP/1.0 cannot take a chunked body")
            _ = try await gateway.publish("/events/old", "for 1.0")
            var parser = SSEParser()
            var events: [SSEEvent] = []
            while events.isEmpty, case .body(let bytes)? = try await client.nextEvent(deadline: .now + patience) {
                events += try parser.feed(bytes)
            }
            #expect(events.first == SSEEvent(id: "1", event: nil, data: "for 1.0"))
        }
    }
}
