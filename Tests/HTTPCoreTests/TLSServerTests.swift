import Glibc
@testable import HTTPCore
import Synchronization
import Testing
import TestSupport

/// What only TLS has, over real sockets: the handshake and what it negotiates,
/// concurrent reading and writing on one TLS connection, certificate checks,
/// close_notify, and bad clients that only hurt themselves. (Everything HTTP
/// does over TLS is covered by `ServerTests`, which run over both transports.)
struct TLSServerTests {
    let certificates = TestCertificates.shared

    /// A TLS client negotiates TLS 1.2 or later and ALPN `http/1.1`, sees the server's certificate, and is answered.
    @Test func handshakeNegotiatesAndServes() async throws {
        try await withServer(over: .tls, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            #expect(["TLSv1.2", "TLSv1.3"].contains(client.connection.tlsProtocolVersion ?? ""))
            #expect(client.connection.tlsALPNProtocol == "http/1.1")
            let certificate = try #require(client.connection.tlsPeerCertificate)
            #expect(certificate.serialNumber == TestCertificates.serverSerial)
            #expect(certificate.subject.contains("CN=localhost"))
            try await client.request("GET", "/hello")
            #expect(try await client.response(deadline: .now + .seconds(5)).text == "GET /hello ")
        }
    }

    /// On one TLS connection a reading task and a writing task run at once, in both directions
    /// on both ends, and every byte arrives in order. The handshake's deadlines are generous
    /// (30 s): the test is about the bytes, and at the start of a test pass, with every suite
    /// running at once on two cores, the accepting task once ran too late for the client's
    /// default 10 s (CI, stop 40).
    @Test func oneReaderAndOneWriterAtOnce() async throws {
        let address = try #require(SocketAddress.resolve(host: "127.0.0.1", port: 0))
        let listener = try Listener(address: address)
        defer { listener.close() }
        let target = try #require(SocketAddress.resolve(host: "127.0.0.1", port: listener.port))
        let context = try certificates.serverContext()
        let toClient = Payload.bytes(3 << 20, seed: 7)
        let toServer = Payload.bytes(3 << 20, seed: 13)
        let serverSide = Task {
            let connection = try await listener.accept(tls: context)
            defer { connection.close() }
            try await connection.handshake(deadline: .now + .seconds(30))
            return try await Self.duplex(connection, send: toClient, expecting: toServer.count)
        }
        let client = try await Connection.connect(to: target, deadline: .now + .seconds(30), tls: certificates.client)
        defer { client.close() }
        let fromServer = try await Self.duplex(client, send: toServer, expecting: toClient.count)
        let fromClient = try await serverSide.value
        #expect(Payload.same(fromServer, toClient))
        #expect(Payload.same(fromClient, toServer))
    }

    /// Writes `bytes` in 48 KiB pieces while concurrently reading `count` bytes; returns what was read.
    static func duplex(_ connection: Connection, send bytes: [UInt8], expecting count: Int) async throws -> [UInt8] {
        try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var start = 0
                while start < bytes.count {
                    let end = min(bytes.count, start + 48 * 1024)
                    try await connection.write(Array(bytes[start..<end]), deadline: .now + .seconds(20))
                    start = end
                }
                return nil
            }
            group.addTask {
                var received: [UInt8] = []
                while received.count < count {
                    let piece = try await connection.read(maxBytes: 65536, deadline: .now + .seconds(20))
                    if piece.isEmpty { break }
                    received += piece
                }
                return received
            }
            var received: [UInt8] = []
            for try await result in group { if let result { received = result } }
            return received
        }
    }

    /// A client that does not trust the server's CA, or expects another name, fails its handshake;
    /// the server goes on, and a client that expects its IP address is served.
    @Test func clientRefusesAnUnverifiedServer() async throws {
        try await withServer(over: .tls, handler: echoHandler) { server in
            let wrongName = try TLSClientContext(trustedCAFile: certificates.caCertificate, serverName: "other.example")
            await #expect(throws: TLSError.self) { try await HTTPClient.connect(port: server.port, tls: wrongName) }
            // Trusting only an unrelated certificate: the chain cannot be verified.
            let wrongCA = try TLSClientContext(trustedCAFile: certificates.expiredCertificate, serverName: "localhost")
            await #expect(throws: TLSError.self) { try await HTTPClient.connect(port: server.port, tls: wrongCA) }
            // An IP literal is checked against the certificate's IP addresses (127.0.0.1 is one).
            let byAddress = try TLSClientContext(trustedCAFile: certificates.caCertificate, serverName: "127.0.0.1")
            let client = try await HTTPClient.connect(port: server.port, tls: byAddress)
            defer { client.close() }
            try await client.request("GET", "/after")
            #expect(try await client.response(deadline: .now + .seconds(5)).text == "GET /after ")
        }
    }

    /// Plain HTTP sent to the TLS port is answered with a plain-text 400 saying so, and closed.
    @Test func plainHTTPOnTheTLSPortIsAnswered400() async throws {
        try await withServer(over: .tls, handler: echoHandler) { server in
            let plain = try await HTTPClient.connect(port: server.port)
            defer { plain.close() }
            try await plain.request("GET", "/")
            let response = try await plain.response(deadline: .now + .seconds(5))
            #expect(response.status == 400)
            #expect(response.text.contains("HTTPS"))
            #expect(try await readUntilClosed(plain, deadline: .now + .seconds(5)).isEmpty)
            #expect(server.counters.tlsHandshakeFailures.load(ordering: .relaxed) == 1)
        }
    }

    /// A garbage ClientHello, a handshake abandoned with a reset, and a handshake that stalls
    /// past the header timeout each end only their own connection, while an HTTPS stream
    /// keeps flowing and new HTTPS clients are served.
    @Test func badHandshakesHurtOnlyThemselves() async throws {
        try await withServer({ $0.headerTimeout = .seconds(2) }, over: .tls, handler: tickingHandler) { server in
            let stream = try await server.connect()
            defer { stream.close() }
            try await stream.request("GET", "/ticks")
            guard case .head? = try await stream.nextEvent(deadline: .now + .seconds(5)) else {
                Issue.record("no response head")
                return
            }
            func streamStillFlows() async throws -> Bool {
                for _ in 0..<3 { guard case .body? = try await stream.nextEvent(deadline: .now + .seconds(2)) else { return false } }
                return true
            }
            #expect(try await streamStillFlows())

            // Garbage: a handshake record whose content is not a ClientHello; refused at once.
            let garbage = try await HTTPClient.connect(port: server.port)
            defer { garbage.close() }
            var start = ContinuousClock.now
            try await garbage.send([0x16, 0x03, 0x01, 0x00, 0x08, 0xde, 0xad, 0xbe, 0xef, 0x00, 0x01, 0x02, 0x03])
            _ = try await readUntilClosed(garbage, deadline: .now + .seconds(5))
            #expect(ContinuousClock.now - start < .seconds(1.5))
            #expect(try await streamStillFlows())

            // Aborted: half a ClientHello, then a reset.
            let aborted = try await HTTPClient.connect(port: server.port)
            try await aborted.send([0x16, 0x03, 0x01, 0x01, 0x00, 0x01, 0x00, 0x00, 0xfc, 0x03, 0x03])
            aborted.connection.setResetOnClose()
            aborted.close()
            #expect(try await streamStillFlows())

            // Slow: a ClientHello header and then nothing; cut at the header deadline.
            start = .now  // Before the connection: the server's deadline starts with it.
            let slow = try await HTTPClient.connect(port: server.port)
            defer { slow.close() }
            try await slow.send([0x16, 0x03, 0x01, 0x01, 0x00, 0x01])
            #expect(try await streamStillFlows())
            let fresh = try await server.connect()
            defer { fresh.close() }
            try await fresh.request("GET", "/meanwhile")
            #expect(try await fresh.response(deadline: .now + .seconds(5)).text == "GET /meanwhile ")
            _ = try await readUntilClosed(slow, deadline: .now + .seconds(6))
            let elapsed = ContinuousClock.now - start
            #expect(elapsed >= .milliseconds(1900) && elapsed < .seconds(5))

            #expect(await eventually(upTo: 5) { server.counters.tlsHandshakeFailures.load(ordering: .relaxed) == 3 })
            #expect(try await streamStillFlows())
        }
    }

    /// When the server closes a TLS connection it sends close_notify first: the client reads a clean end.
    @Test func closeSendsCloseNotify() async throws {
        try await withServer(over: .tls, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            try await client.send("GET /bye HTTP/1.0\r\n\r\n")
            #expect(try await client.response(deadline: .now + .seconds(5)).text == "GET /bye ")
            #expect(try await readUntilClosed(client, deadline: .now + .seconds(5)).isEmpty)
            #expect(client.connection.tls?.receivedCloseNotify == true)
        }
    }

}

/// `/ticks` streams a line every 50 ms until the client goes; anything else is echoed.
let tickingHandler: HTTPHandler = { request in
    guard request.head.target == "/ticks" else { return await echoHandler(request) }
    let source = TestSource()
    Task {
        while !source.isCancelled {
            source.send("tick\n")
            // The stream's pace, not a wait: a tick every 50 ms is what its readers check for.
            try? await Task.sleep(for: .milliseconds(50))
        }
    }
    return HTTPResponse(head: HTTPResponseHead(status: .ok), body: source.body)
}
