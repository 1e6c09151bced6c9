import Glibc
import HTTPCore
import StreamHub
import TestSupport

/// An SSE subscriber of the reliability tests that checks every event as it is
/// parsed (by `LFEventScanner`: these tests read megabytes), so nothing needs to be kept: ids are decimal and each is the previous
/// plus one (`/events`) or larger than it (`/state`, where superseded values are
/// skipped), and `check` (if any) accepts the event's data. The first problem is
/// kept in `problem`; reading goes on. Used from one task.
final class CheckedStream {
    enum IDOrder {
        /// Every id is the previous plus one: nothing lost, doubled or reordered.
        case contiguous
        /// Every id is larger than the previous: nothing doubled or reordered.
        case increasing
    }

    let client: HTTPClient
    let order: IDOrder
    /// Checks one event's data given its id; returns a problem, or nil if fine.
    private let check: ((UInt64, String) -> String?)?
    /// Told the event count after every read that completed events.
    private let onEvents: ((Int) -> Void)?
    private var scanner = LFEventScanner()
    private(set) var first: UInt64?
    private(set) var last: UInt64?
    private(set) var lastData: String?
    private(set) var count = 0
    private(set) var problem: String?
    private(set) var ended = false

    private init(client: HTTPClient, order: IDOrder, check: ((UInt64, String) -> String?)?,
                 onEvents: ((Int) -> Void)? = nil) {
        self.client = client
        self.order = order
        self.check = check
        self.onEvents = onEvents
    }

    /// Connects (over TLS with `tls`, the handshake included in the wait), sends
    /// `GET target` and waits for the response head, which must be a `200`.
    static func open(port: Int, target: String, order: IDOrder, headWithin seconds: Double = 10,
                     tls: TLSClientContext? = nil, check: ((UInt64, String) -> String?)? = nil,
                     onEvents: ((Int) -> Void)? = nil) async throws -> CheckedStream {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let client = try await HTTPClient.connect(port: port, deadline: deadline, tls: tls)
        let stream = CheckedStream(client: client, order: order, check: check, onEvents: onEvents)
        do {
            try await client.request("GET", target, headers: [("Accept", "text/event-stream")])
            try await stream.readHead(deadline: deadline, target: target)
        } catch {
            client.close()
            throw error
        }
        return stream
    }

    /// Connects (over TLS with `tls`) and sends `GET target` without waiting for
    /// anything more (to leave before the head).
    static func sendOnly(port: Int, target: String, tls: TLSClientContext? = nil) async throws -> CheckedStream {
        let client = try await HTTPClient.connect(port: port, deadline: .now + .seconds(10), tls: tls)
        try await client.request("GET", target, headers: [("Accept", "text/event-stream")])
        return CheckedStream(client: client, order: .increasing, check: nil)
    }

    private func readHead(deadline: ContinuousClock.Instant, target: String) async throws {
        guard case .head(let head)? = try await client.nextEvent(deadline: deadline) else {
            throw HarnessFailure("\(target): the connection ended without a response head")
        }
        guard head.status == 200 else { throw HarnessFailure("\(target): status \(head.status)") }
    }

    /// Reads until at least `count` events arrived in all; false if the stream ended or `seconds` passed first.
    func read(count target: Int, within seconds: Double) async throws -> Bool {
        try await read(within: seconds) { self.count >= target }
    }

    /// Reads until the event with id `id` (or a later one) arrived; false if the stream ended or `seconds` passed first.
    func read(throughID id: UInt64, within seconds: Double) async throws -> Bool {
        try await read(within: seconds) { (self.last ?? 0) >= id }
    }

    private func read(within seconds: Double, until done: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !done() {
            if ended { return false }
            do {
                switch try await client.nextEvent(deadline: deadline) {
                case .body(let bytes): feed(bytes)
                case .head, .end, nil: ended = true
                }
            } catch IOWaitError.timedOut {
                return false
            }
        }
        return true
    }

    /// Reads (checking events) until the response ends, up to `seconds`.
    func readToEnd(within seconds: Double) async -> SSEEnding {
        await client.readToEnding(upTo: seconds) { feed($0) }
    }

    private func feed(_ bytes: [UInt8]) {
        let events = scanner.feed(bytes)
        for event in events { accept(event) }
        if !events.isEmpty { onEvents?(count) }
    }

    private func accept(_ event: SSEEvent) {
        count += 1
        guard problem == nil else { return }
        guard let text = event.id, let id = UInt64(text) else {
            problem = "event without a decimal id: \(event.id ?? "nil")"
            return
        }
        if let last {
            switch order {
            case .contiguous where id != last + 1:
                problem = "id \(id) after \(last)"
            case .increasing where id <= last:
                problem = "id \(id) after \(last)"
            default:
                break
            }
        }
        if problem == nil, let check, let complaint = check(id, event.data) {
            problem = "id \(id): \(complaint)"
        }
        if first == nil { first = id }
        last = id
        lastData = event.data
    }

    /// Leaves as a well-behaved client does: a FIN (`shutdown(SHUT_WR)`), then
    /// reading what is still coming until the server closes its side, then close.
    /// The ending tells whether the server noticed within `seconds`.
    func leaveGracefully(within seconds: Double) async -> SSEEnding {
        Glibc.shutdown(client.connection.fd, Int32(SHUT_WR))
        let ending = await readToEnd(within: seconds)
        client.close()
        return ending
    }

    /// Leaves abruptly: a reset (`SO_LINGER` 0), whatever is unread.
    func leaveAbruptly() {
        client.connection.setResetOnClose()
        client.close()
    }

    func close() { client.close() }
}

/// A keep-alive publishing connection (over TLS with `tls`): one `POST` at a
/// time, each answered `200` with the new id (anything else throws). Used from one task.
final class KeepAlivePublisher {
    private let port: Int
    private let tls: TLSClientContext?
    private var client: HTTPClient?

    init(port: Int, tls: TLSClientContext? = nil) {
        self.port = port
        self.tls = tls
    }

    /// Publishes `body` to `target` (`/events/…` or `/state/…`); the id the gateway answered with.
    func publish(_ target: String, _ body: [UInt8], within seconds: Double = 10) async throws -> UInt64 {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        if client == nil { client = try await HTTPClient.connect(port: port, deadline: deadline, tls: tls) }
        guard let client else { throw HarnessFailure("no publishing connection") }
        let response: HTTPClient.Response
        do {
            try await client.request("POST", target, body: body)
            response = try await client.response(deadline: deadline)
        } catch {
            close()
            throw error
        }
        if response.head.headers["Connection"]?.lowercased() == "close" { close() }
        guard response.status == 200, let id = Self.id(in: response.body) else {
            throw HarnessFailure("POST \(target) answered \(response.status): \(response.text)")
        }
        return id
    }

    /// The id of a reply `{"id":"<id>","subscribers":<n>}`.
    static func id(in body: [UInt8]) -> UInt64? {
        let text = String(decoding: body, as: UTF8.self)
        guard let start = text.range(of: #""id":""#) else { return nil }
        return UInt64(text[start.upperBound...].prefix { $0.isNumber })
    }

    func close() {
        client?.close()
        client = nil
    }
}

/// A payload of about `size` bytes that starts with `tag` and a space.
func payload(_ tag: String, size: Int) -> [UInt8] {
    let head = Array("\(tag) ".utf8)
    return head + [UInt8](repeating: UInt8(ascii: "x"), count: max(0, size - head.count))
}

/// The tag a `payload` starts with.
func payloadTag(_ data: String) -> Substring {
    data.prefix { $0 != " " }
}
