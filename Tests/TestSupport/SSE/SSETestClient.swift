import HTTPCore
import StreamHub

/// The tests' SSE client: one connection, `GET target`, the response head, then
/// events decoded with the gateway's own spec-following `SSEParser`, and at the end
/// how the response ended (terminated cleanly, cut, still open). Plain or TLS as
/// the `tls` context says. Used from one task.
public final class SSETestClient {
    public let client: HTTPClient
    private var receivedHead: HTTPResponseParser.Head?
    private var parser = SSEParser()
    private var pending: [SSEEvent] = []
    /// The response ended (or the connection failed) while reading events.
    public private(set) var ended = false

    private init(client: HTTPClient) {
        self.client = client
    }

    /// Connects to 127.0.0.1:`port` and sends `GET target`; the head is nil if it does
    /// not arrive within `headWithin` seconds (the connection may wait in the backlog:
    /// `waitForHead` can try again later).
    public static func connect(port: Int, target: String, headers: [(String, String)] = [],
                               tls: TLSClientContext? = nil, headWithin seconds: Double = 10) async throws
        -> (stream: SSETestClient, head: HTTPResponseParser.Head?)
    {
        let client = try await HTTPClient.connect(port: port, deadline: .now + .seconds(10), tls: tls)
        let stream = try await SSETestClient.request(on: client, target: target, headers: headers)
        return (stream, try await stream.waitForHead(upTo: seconds))
    }

    /// Sends `GET target` on `client` and reads the response head (within 10 s, else throws).
    public static func open(client: HTTPClient, target: String, headers: [(String, String)] = []) async throws
        -> SSETestClient
    {
        let stream = try await request(on: client, target: target, headers: headers)
        guard try await stream.waitForHead(upTo: 10) != nil else {
            throw HarnessFailure("no response head for \(target)")
        }
        return stream
    }

    /// Opens a plain-HTTP stream to 127.0.0.1:`port` and reads its head.
    public static func open(port: Int, target: String, headers: [(String, String)] = []) async throws -> SSETestClient {
        try await open(client: try await HTTPClient.connect(port: port), target: target, headers: headers)
    }

    private static func request(on client: HTTPClient, target: String, headers: [(String, String)]) async throws
        -> SSETestClient
    {
        try await client.request("GET", target, headers: [("Accept", "text/event-stream")] + headers)
        return SSETestClient(client: client)
    }

    /// The response head; only after `open`, or once `waitForHead` returned one.
    public var head: HTTPResponseParser.Head {
        guard let receivedHead else { preconditionFailure("no response head yet") }
        return receivedHead
    }

    /// The response head, or nil if it does not arrive within `seconds`.
    public func waitForHead(upTo seconds: Double) async throws -> HTTPResponseParser.Head? {
        if let receivedHead { return receivedHead }
        do {
            guard case .head(let head)? = try await client.nextEvent(deadline: .now + .milliseconds(Int(seconds * 1000)))
            else { throw HarnessFailure("the connection ended without a response head") }
            receivedHead = head
            return head
        } catch IOWaitError.timedOut {
            return nil
        }
    }

    /// The `retry:` value the stream announced, once read.
    public var retry: Int? { parser.retry }

    /// How many comment lines (heartbeats) were seen.
    public var comments: Int { parser.comments }

    /// The next event; nil when the stream ended, `StreamTimedOut` when `seconds` passed.
    public func next(within seconds: Double = 5) async throws -> SSEEvent? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while pending.isEmpty {
            if ended { return nil }
            guard try await read(until: deadline, seconds: seconds) else { return nil }
        }
        return pending.removeFirst()
    }

    /// The next event within `seconds`; throws if the stream ends first.
    public func nextEvent(upTo seconds: Double = 10) async throws -> SSEEvent {
        guard let event = try await next(within: seconds) else {
            throw HarnessFailure("the stream ended before the next event")
        }
        return event
    }

    /// Reads `count` events (fewer if the stream ends).
    public func next(_ count: Int, within seconds: Double = 5) async throws -> [SSEEvent] {
        var events: [SSEEvent] = []
        while events.count < count, let event = try await next(within: seconds) { events.append(event) }
        return events
    }

    /// True if no event arrives within `seconds`.
    public func staysQuiet(for seconds: Double) async throws -> Bool {
        do {
            return try await next(within: seconds) == nil && !ended
        } catch is StreamTimedOut {
            return true
        }
    }

    /// The `retry:` value the stream opens with, read within `seconds`.
    public func retry(upTo seconds: Double = 10) async throws -> Int {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while parser.retry == nil {
            guard !ended, try await read(until: deadline, seconds: seconds) else {
                throw HarnessFailure("the stream ended before its retry line")
            }
        }
        return parser.retry ?? 0
    }

    /// Reads (and drops) whatever is left until the response ends, up to `seconds`.
    public func ending(upTo seconds: Double) async -> SSEEnding {
        await client.readToEnding(upTo: seconds)
    }

    public func close() { client.close() }

    /// One read into the parser; false when the response ended.
    private func read(until deadline: ContinuousClock.Instant, seconds: Double) async throws -> Bool {
        let event: HTTPResponseParser.Event?
        do {
            event = try await client.nextEvent(deadline: deadline)
        } catch IOWaitError.timedOut {
            throw StreamTimedOut(seconds: seconds)
        } catch {
            ended = true
            return false
        }
        switch event {
        case .body(let bytes):
            pending.append(contentsOf: try parser.feed(bytes))
            return true
        case .head, .end, nil:
            ended = true
            return false
        }
    }
}
