import Glibc
import HTTPCore
import Testing
import TestSupport

/// Complete responses on the wire: the head the server encodes around a handler's fields.
struct CompleteResponseTests {
    /// The handler's fields keep their order; `Date`, `Content-Length` and `Connection`
    /// the handler gave are replaced by the server's, which come last in that order.
    @Test(arguments: Transport.allCases)
    func serverFieldsComeLastAndReplaceTheHandlers(_ transport: Transport) async throws {
        let handler: HTTPHandler = { _ in
            HTTPResponse(status: .ok, headers: ["X-A": "1", "date": "bogus", "Content-Length": "99", "X-B": "2"],
                         body: Array("hi".utf8))
        }
        try await withServer(over: transport, handler: handler) { server in
            let client = try await server.connect()
            defer { client.close() }
            try await client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let text = String(decoding: try await readUntilClosed(client, deadline: .now + patience), as: UTF8.self)
            let date = try #require(text.split(separator: "\r\n").first { $0.hasPrefix("Date: ") })
            #expect(HTTPDate.parse(String(date.dropFirst(6))) != nil)
            #expect(text == "HTTP/1.1 200 OK\r\nX-A: 1\r\nX-B: 2\r\n\(date)\r\nContent-Length: 2\r\n"
                + "Connection: close\r\n\r\nhi")
        }
    }

    /// A body larger than what is copied behind the head arrives whole, after the head.
    @Test func largeBodyFollowsTheHead() async throws {
        let body = (0..<20_000).map { UInt8(truncatingIfNeeded: $0 % 251) }
        try await withServer(handler: { _ in HTTPResponse(status: .ok, body: body) }) { server in
            let client = try await server.connect()
            defer { client.close() }
            try await client.send("GET / HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
            let raw = try await readUntilClosed(client, deadline: .now + patience)
            let text = String(decoding: raw.prefix(200), as: UTF8.self)
            #expect(text.contains("\r\nContent-Length: 20000\r\nConnection: close\r\n\r\n"))
            #expect(Array(raw.suffix(body.count)) == body)
        }
    }
}
