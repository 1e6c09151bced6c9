import Testing
import TestSupport
@testable import HTTPCore

/// After a read that emptied the socket, the next request's read waits for readability
/// first (`Connection.readAfterDrain`): nothing that arrives is missed, whatever the
/// timing, and a peer that hung up is noticed at once.
struct KeepAliveReadTests {
    /// Requests sent one at a time, each after the previous answer, are all answered.
    @Test(arguments: Transport.allCases)
    func oneAtATime(_ transport: Transport) async throws {
        try await withServer(over: transport, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            for i in 0..<50 {
                try await client.request("GET", "/r\(i)")
                #expect(try await client.response(deadline: .now + patience).text == "GET /r\(i) ")
            }
        }
    }

    /// Pipelined requests filling several reads (a full read is not "drained") are all
    /// answered, in order.
    @Test(arguments: Transport.allCases)
    func pipelinedBeyondOneRead(_ transport: Transport) async throws {
        try await withServer(over: transport, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            let padding = String(repeating: "p", count: 100)
            var burst = ""
            for i in 0..<120 { burst += "GET /\(i)?\(padding) HTTP/1.1\r\nHost: x\r\n\r\n" }
            #expect(burst.utf8.count > 3 * 4096)
            try await client.send(burst)
            for i in 0..<120 {
                #expect(try await client.response(deadline: .now + patience).text == "GET /\(i)?\(padding) ")
            }
        }
    }

    /// A request followed by the client's FIN is answered, and the connection closes at
    /// once rather than at the idle timeout (the hang-up's edge was already consumed).
    @Test func halfCloseAfterARequestClosesAtOnce() async throws {
        try await withServer({ $0.idleTimeout = .seconds(30) }, handler: echoHandler) { server in
            let client = try await server.connect()
            defer { client.close() }
            // Let the server wait for the request, so that its bytes and the FIN arrive
            // as one readiness event (the wait that reads the request consumes the
            // hang-up's edge too). Not a wait for an event: that the connection's task
            // waits for readability shows nowhere outside the loop; had it not started
            // waiting yet, the test would pass without covering the edge, never fail.
            try await Task.sleep(for: .milliseconds(200))
            try await client.send("GET /last HTTP/1.1\r\nHost: x\r\n\r\n")
            client.connection.finishWriting()
            #expect(try await client.response(deadline: .now + patience).text == "GET /last ")
            let start = ContinuousClock.now
            #expect(try await readUntilClosed(client, deadline: .now + patience).isEmpty)
            #expect(ContinuousClock.now - start < .seconds(10))
        }
    }
}
