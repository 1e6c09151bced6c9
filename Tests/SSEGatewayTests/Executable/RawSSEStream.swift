import HTTPCore
import StreamHub

/// An SSE response read at the byte level, so a test can tell a stream that
/// ended cleanly (chunked terminator, then EOF) from one that was cut.
/// Used from one task.
final class RawSSEStream {
    let client: HTTPClient
    private var parser = SSEParser()
    private var pending: [SSEEvent] = []

    private init(client: HTTPClient) {
        self.client = client
    }

    /// Connects and sends `GET target`; nil if no response head arrives within
    /// `seconds` (the connection is then still open, waiting in the backlog:
    /// `waitForHead` can try again later).
    static func open(port: Int, target: String, headWithin seconds: Double = 10,
                     tls: TLSClientContext? = nil) async throws
        -> (stream: RawSSEStream, head: HTTPResponseParser.Head?)
    {
        let client = try await HTTPClient.connect(port: port, deadline: .now + .seconds(10), tls: tls)
        try await client.request("GET", target, headers: [("Accept", "text/event-stream")])
        let stream = RawSSEStream(client: client)
        return (stream, try await stream.waitForHead(upTo: seconds))
    }

    /// The response head, or nil if it does not arrive within `seconds`.
    func waitForHead(upTo seconds: Double) async throws -> HTTPResponseParser.Head? {
        do {
            guard case .head(let head)? = try await client.nextEvent(deadline: .now + .milliseconds(Int(seconds * 1000)))
            else { throw HarnessFailure("the connection ended without a response head") }
            return head
        } catch IOWaitError.timedOut {
            return nil
        }
    }

    /// The next SSE event within `seconds`.
    func next(upTo seconds: Double = 10) async throws -> SSEEvent {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while pending.isEmpty {
            switch try await client.nextEvent(deadline: deadline) {
            case .body(let bytes): pending.append(contentsOf: try parser.feed(bytes))
            case .head, .end, nil: throw HarnessFailure("the stream ended before the next event")
            }
        }
        return pending.removeFirst()
    }

    /// The `retry:` value the stream opens with, read within `seconds`.
    func retry(upTo seconds: Double = 10) async throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while parser.retry == nil {
            switch try await client.nextEvent(deadline: deadline) {
            case .body(let bytes): pending.append(contentsOf: try parser.feed(bytes))
            case .head, .end, nil: throw HarnessFailure("the stream ended before its retry line")
            }
        }
        return parser.retry ?? 0
    }

    /// How a response ended.
    enum Ending: Equatable {
        /// The chunked terminator `0\r\n\r\n` arrived, then EOF.
        case terminatedThenEOF
        /// EOF (or a reset) without the terminator.
        case cut(String)
        /// Still open after the wait.
        case stillOpen
    }

    /// Reads (and drops) whatever is left until the response ends, up to `seconds`.
    func ending(upTo seconds: Double) async -> Ending {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        do {
            while true {
                switch try await client.nextEvent(deadline: deadline) {
                case .body: continue
                case .head: return .cut("a second response head")
                case nil: return .cut("EOF before the chunked terminator")
                case .end:
                    let after = try await client.connection.read(deadline: deadline)
                    return after.isEmpty ? .terminatedThenEOF : .cut("bytes after the terminator")
                }
            }
        } catch IOWaitError.timedOut {
            return .stillOpen
        } catch {
            return .cut("\(error)")
        }
    }

    func close() { client.close() }
}
