import Glibc
import HTTPCore
import StreamHub

/// The tests' SSE client: one connection, `GET target`, the response head, then
/// events, and at the end how the response ended (terminated cleanly, cut, still
/// open). Plain or TLS as the `tls` context says. Used from one task.
///
/// Configurable for what a test reads: events are decoded by the gateway's own
/// spec-following `SSEParser` (`.spec`, the default) or, for tests that read
/// megabytes, by `LFEventScanner` (`.lineScan`); they are queued for `next`, or,
/// with `onEvents` set, handed over as they are decoded and not kept (a checker such
/// as the reliability tests' `CheckedStream`).
public final class SSETestClient {
    /// How events are decoded.
    public enum Decoding: Sendable {
        /// `SSEParser`: every rule of the spec, byte by byte.
        case spec
        /// `LFEventScanner`: LF line ends only, a line at a time (fast in debug builds).
        case lineScan
    }

    public let client: HTTPClient
    private var receivedHead: HTTPResponseParser.Head?
    private var parser = SSEParser()
    private var scanner: LFEventScanner?
    private var pending: [SSEEvent] = []
    /// Takes every batch of decoded events instead of the queue `next` reads, when set.
    public var onEvents: (([SSEEvent]) -> Void)?
    /// The response ended (or the connection failed) while reading events.
    public private(set) var ended = false

    private init(client: HTTPClient, decoding: Decoding) {
        self.client = client
        if case .lineScan = decoding { scanner = LFEventScanner() }
    }

    /// Connects to 127.0.0.1:`port` (within 10 s, a TLS handshake included) and sends
    /// `GET target`; the head is nil if it does not arrive within `headWithin` seconds
    /// (the connection may wait in the backlog: `waitForHead` can try again later), or
    /// not waited for at all with `headWithin: nil`.
    public static func connect(port: Int, target: String, headers: [(String, String)] = [],
                               tls: TLSClientContext? = nil, headWithin seconds: Double? = 10,
                               decoding: Decoding = .spec) async throws
        -> (stream: SSETestClient, head: HTTPResponseParser.Head?)
    {
        let client = try await HTTPClient.connect(port: port, deadline: .now + .seconds(10), tls: tls,
                                                 http2: TestHTTP.isHTTP2)
        do {
            let stream = try await SSETestClient.request(on: client, target: target, headers: headers, decoding: decoding)
            guard let seconds else { return (stream, nil) }
            return (stream, try await stream.waitForHead(upTo: seconds))
        } catch {
            client.close()
            throw error
        }
    }

    /// Sends `GET target` on `client` and reads the response head (within 10 s, else throws).
    public static func open(client: HTTPClient, target: String, headers: [(String, String)] = []) async throws
        -> SSETestClient
    {
        let stream = try await request(on: client, target: target, headers: headers, decoding: .spec)
        guard try await stream.waitForHead(upTo: 10) != nil else {
            throw HarnessFailure("no response head for \(target)")
        }
        return stream
    }

    /// Opens a plain-HTTP stream to 127.0.0.1:`port` and reads its head.
    public static func open(port: Int, target: String, headers: [(String, String)] = []) async throws -> SSETestClient {
        try await open(client: try await HTTPClient.connect(port: port, http2: TestHTTP.isHTTP2), target: target, headers: headers)
    }

    private static func request(on client: HTTPClient, target: String, headers: [(String, String)],
                                decoding: Decoding) async throws -> SSETestClient
    {
        try await client.request("GET", target, headers: [("Accept", "text/event-stream")] + headers)
        return SSETestClient(client: client, decoding: decoding)
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

    /// The `retry:` value the stream announced, once read (`.spec` decoding).
    public var retry: Int? { parser.retry }

    /// How many comment lines (heartbeats) were seen (`.spec` decoding).
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

    /// Reads until `done()` holds (with `onEvents`: the checker has what it waits for);
    /// false if the stream ended or `seconds` passed first.
    public func read(within seconds: Double, until done: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !done() {
            if ended { return false }
            do {
                guard try await read(until: deadline, seconds: seconds) else { return false }
            } catch is StreamTimedOut {
                return false
            }
        }
        return true
    }

    /// Reads what is left (decoding it) until the response ends, up to `seconds`.
    public func ending(upTo seconds: Double) async -> SSEEnding {
        await client.readToEnding(upTo: seconds) { try? decode($0) }
    }

    /// Leaves as a well-behaved client does: a FIN (`shutdown(SHUT_WR)`), then reading
    /// what is still coming until the server closes its side, then close. The ending
    /// tells whether the server noticed within `seconds`.
    public func leaveGracefully(within seconds: Double) async -> SSEEnding {
        Glibc.shutdown(client.connection.fd, Int32(SHUT_WR))
        let ending = await ending(upTo: seconds)
        client.close()
        return ending
    }

    /// Leaves abruptly: a reset (`SO_LINGER` 0), whatever is unread.
    public func leaveAbruptly() {
        client.connection.setResetOnClose()
        client.close()
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
            try decode(bytes)
            return true
        case .head, .end, nil:
            ended = true
            return false
        }
    }

    /// Decodes `bytes` and queues the events or hands them to `onEvents`.
    private func decode(_ bytes: [UInt8]) throws {
        let events = scanner != nil ? scanner!.feed(bytes) : try parser.feed(bytes)
        guard !events.isEmpty else { return }
        if let onEvents { onEvents(events) } else { pending.append(contentsOf: events) }
    }
}
