import Glibc
import HTTPCore
import StreamHub
import Testing
@testable import SSEGateway
import TestSupport

/// How long a test waits on the gateway before calling it a failure. Generous: every
/// suite of the package runs at once in one process, on two pool threads of a loaded
/// 2-core machine, and the first requests can wait seconds behind the start-up burst.
let patience: Duration = .seconds(10)

/// Requests `HTTPClient.request` cannot express (broken framing, bare line
/// ends, HTTP/1.0, pipelining), written as raw bytes on a fresh connection.
extension RunningGateway {
    /// Opens a connection over the gateway's transport and writes `text` as is (raw
    /// bytes: HTTP/1.1). With no text, a client in the run's HTTP version (`TestHTTP`).
    func connect(sending text: String = "") async throws -> HTTPClient {
        let client = try await HTTPClient.connect(port: port, deadline: .now + patience, tls: transport.client,
                                                  http2: text.isEmpty && TestHTTP.isHTTP2)
        if !text.isEmpty { try await client.send(text) }
        return client
    }

    /// Writes `bytes` on a fresh HTTP/1.1 connection, reads one response, then waits
    /// for the server to close; `closed` is false if it stays open (or sends more).
    func exchange(_ bytes: [UInt8]) async throws -> (response: HTTPClient.Response, closed: Bool) {
        let client = try await HTTPClient.connect(port: port, deadline: .now + patience, tls: transport.client)
        defer { client.close() }
        try await client.send(bytes)
        let response = try await client.response(deadline: .now + patience)
        return (response, await client.isClosedByServer())
    }

    func exchange(_ text: String) async throws -> (response: HTTPClient.Response, closed: Bool) {
        try await exchange(Array(text.utf8))
    }

    /// The first event of `stream` is `id` with `data`: whatever was refused before reached no one.
    func expectFirstEvent(_ stream: SSETestClient, id: String, data: String, event: String? = nil,
                          sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let first = try await stream.next(within: 10)
        #expect(first == SSEEvent(id: id, event: event, data: data), sourceLocation: sourceLocation)
    }
}

extension HTTPClient {
    /// True when the server closes the connection (EOF or reset) within `seconds`
    /// without sending anything more; false when it stays open or sends more. Over
    /// HTTP/2, frames before the close (a `GOAWAY`, acknowledgements) do not count.
    func isClosedByServer(within seconds: Double = 10) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        if isHTTP2 {
            do {
                while try await !connection.read(maxBytes: 16 * 1024, deadline: deadline).isEmpty {}
                return true
            } catch let error as SystemError {
                return error.errno == ECONNRESET
            } catch {
                return false
            }
        }
        do {
            return try await nextEvent(deadline: .now + .milliseconds(Int(seconds * 1000))) == nil
        } catch let error as SystemError {
            return error.errno == ECONNRESET
        } catch {
            return false
        }
    }
}

extension HTTPClient.Response {
    /// API.md's error body: `text/plain`, one non-empty line.
    var isOneLineReason: Bool {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return head.headers["Content-Type"]?.hasPrefix("text/plain") == true
            && lines.count == 2 && !lines[0].isEmpty && lines[1].isEmpty
    }

    /// The response as one line for failure messages.
    var summary: String { "\(status) \(text.debugDescription)" }
}

/// `response` has `status` and a one-line plain-text reason.
func expectRefusal(_ response: HTTPClient.Response, _ status: Int, _ what: String = "",
                   sourceLocation: SourceLocation = #_sourceLocation) {
    #expect(response.status == status, "\(what): \(response.summary)", sourceLocation: sourceLocation)
    #expect(response.isOneLineReason, "\(what): not a one-line reason: \(response.summary)",
            sourceLocation: sourceLocation)
}
