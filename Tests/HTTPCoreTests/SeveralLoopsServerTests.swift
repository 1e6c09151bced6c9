import Synchronization
import Testing
import TestSupport
@testable import HTTPCore

/// A server over several event loops (`--loops N`): connections are spread over
/// them, and each one's handler runs on its own loop's thread.
struct SeveralLoopsServerTests {
    @Test func connectionsAreSpreadOverTheLoops() async throws {
        // Loops of this test's own: other tests' descriptors do not skew the spread.
        let loops = [try EventLoop(index: 80), try EventLoop(index: 81)]
        var configuration = HTTPServerConfiguration()
        configuration.port = 0
        let server = try HTTPServer(configuration: configuration, loops: loops) { _ in
            let place = loops.firstIndex { $0.isLoopThread }.map(String.init) ?? "elsewhere"
            return HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: Array(place.utf8))
        }
        let running = Task { await server.run() }
        defer {
            server.shutdown()
            running.cancel()
        }
        // Held open together: each new one goes to the loop with fewer descriptors.
        var clients: [HTTPClient] = []
        var places: [String] = []
        for _ in 0..<6 {
            let client = try await server.connect()
            clients.append(client)
            try await client.request("GET", "/where")
            places.append(try await client.response(deadline: .now + patience).text)
        }
        #expect(places.filter { $0 == "0" }.count == 3, "\(places)")
        #expect(places.filter { $0 == "1" }.count == 3, "\(places)")
        // Keep-alive: a connection's later requests stay on its loop.
        for (client, place) in zip(clients, places) {
            try await client.request("GET", "/again")
            #expect(try await client.response(deadline: .now + patience).text == place)
        }
        for client in clients { client.close() }
        server.shutdown()
        await running.value
    }
}
