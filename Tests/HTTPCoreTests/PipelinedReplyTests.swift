import HTTPCore
import Locking
import Synchronization
import Testing
import TestSupport

/// Pipelined requests (issue 27): the replies to requests read together leave in one
/// write, in order, ahead of anything else the connection writes; a client that
/// pipelines and never reads is still bounded and cut off at the write deadline.
struct PipelinedReplyTests {
    /// Eight requests sent in one write are answered in order, all of them in the first
    /// bytes the client receives (one `writev`; over TLS, one record).
    @Test(arguments: Transport.allCases)
    func repliesReadTogetherLeaveInOneWrite(_ transport: Transport) async throws {
        try await withServer(over: transport, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            var burst = ""
            for i in 0..<8 { burst += "GET /\(i) HTTP/1.1\r\nHost: x\r\n\r\n" }
            try await client.send(burst)
            let first = try await client.connection.read(maxBytes: 65536, deadline: .now + patience)
            #expect(try Self.bodies(of: first) == (0..<8).map { "GET /\($0) " })
            try await client.request("GET", "/after")
            #expect(try await client.response(deadline: .now + patience).text == "GET /after ")
        }
    }

    /// The replies to requests read before a malformed one go out first, then its `400`,
    /// then the connection closes.
    @Test(arguments: Transport.allCases)
    func refusalFollowsTheRepliesBeforeIt(_ transport: Transport) async throws {
        try await withServer(over: transport, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            try await client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\nGARBAGE\r\n\r\n")
            #expect(try await client.response(deadline: .now + patience).text == "GET /a ")
            #expect(try await client.response(deadline: .now + patience).text == "GET /b ")
            #expect(try await client.response(deadline: .now + patience).status == 400)
            #expect(try await readUntilClosed(client, deadline: .now + patience).isEmpty)
        }
    }

    /// A request with `Expect: 100-continue` pipelined behind another: the first reply,
    /// then `100 Continue`, then (once the body is sent) the second reply.
    @Test(arguments: Transport.allCases)
    func continueFollowsTheRepliesBeforeIt(_ transport: Transport) async throws {
        try await withServer(over: transport, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            try await client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n"
                + "POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\nExpect: 100-continue\r\n\r\n")
            #expect(try await client.response(deadline: .now + patience).text == "GET /a ")
            #expect(try await client.response(deadline: .now + patience, keepInterim: true).status == 100)
            try await client.send("body")
            #expect(try await client.response(deadline: .now + patience).text == "POST /b body")
        }
    }

    /// A client that pipelines a thousand requests for 64 KiB each and never reads: the
    /// server stops taking requests once the socket is full (it does not answer all of
    /// them into memory) and closes the connection at the write deadline. "Not before the
    /// deadline" is timed from the server's first answer, which comes before any write can
    /// wait (timed from when this test's polling saw it, a loaded CI run once measured
    /// 0.35 s for a 1 s deadline).
    @Test func aClientThatNeverReadsIsBoundedAndCutOff() async throws {
        let handled = Atomic<Int>(0)
        let firstHandled = Locked<ContinuousClock.Instant?>(nil)
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 64 * 1024)
        try await withServer({ $0.writeTimeout = .seconds(1) }, handler: { _ in
            let now = ContinuousClock.now
            firstHandled.withLock { $0 = $0 ?? now }
            handled.add(1, ordering: .relaxed)
            return HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: big)
        }) { server in
            let client = try await server.connect()
            defer { client.close() }
            let requests = 1000
            try await client.send(String(repeating: "GET /big HTTP/1.1\r\nHost: x\r\n\r\n", count: requests))
            // Bounded waits on the server's counters: serving began, then the connection
            // is closed once a write has waited for the deadline.
            var serving = false
            for _ in 0..<500 where !serving {
                serving = handled.load(ordering: .relaxed) > 0
                if !serving { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(serving)
            var closed = false
            for _ in 0..<500 where !closed {
                closed = server.counters.open.load(ordering: .relaxed) == 0
                if !closed { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(closed, "the server still holds the connection of a client that does not read")
            let start = try #require(firstHandled.withLock { $0 })
            #expect(ContinuousClock.now - start >= .milliseconds(500), "cut before its write deadline")
            // Socket buffers on loopback hold a few MiB, not 64 MiB.
            #expect(handled.load(ordering: .relaxed) < requests)
        }
    }

    /// The bodies of the complete responses in `bytes`, in order.
    static func bodies(of bytes: [UInt8]) throws -> [String] {
        var parser = HTTPResponseParser()
        parser.append(bytes)
        var bodies: [String] = []
        var body: [UInt8] = []
        while let event = try parser.next() {
            switch event {
            case .head: body = []
            case .body(let part): body += part
            case .end: bodies.append(String(decoding: body, as: UTF8.self))
            }
        }
        return bodies
    }
}
