import Glibc
import HTTPCore
import StreamHub
import TestSupport

/// An SSE subscriber of the reliability tests: an `SSETestClient` (decoding with
/// `LFEventScanner`: these tests read megabytes) whose events are checked as they
/// arrive, so nothing needs to be kept: ids are decimal and each is the previous
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

    let stream: SSETestClient
    let order: IDOrder
    /// Checks one event's data given its id; returns a problem, or nil if fine.
    private let check: ((UInt64, String) -> String?)?
    /// Told the event count after every read that completed events.
    private let onEvents: ((Int) -> Void)?
    private(set) var first: UInt64?
    private(set) var last: UInt64?
    private(set) var lastData: String?
    private(set) var count = 0
    private(set) var problem: String?

    private init(stream: SSETestClient, order: IDOrder, check: ((UInt64, String) -> String?)?,
                 onEvents: ((Int) -> Void)? = nil) {
        self.stream = stream
        self.order = order
        self.check = check
        self.onEvents = onEvents
        stream.onEvents = { [unowned self] events in
            for event in events { accept(event) }
            self.onEvents?(count)
        }
    }

    var client: HTTPClient { stream.client }
    var ended: Bool { stream.ended }

    /// Connects (over TLS with `tls`), sends `GET target` and waits for the response
    /// head, which must be a `200`.
    static func open(port: Int, target: String, order: IDOrder, headWithin seconds: Double = 10,
                     tls: TLSClientContext? = nil, headers: [(String, String)] = [],
                     check: ((UInt64, String) -> String?)? = nil,
                     onEvents: ((Int) -> Void)? = nil) async throws -> CheckedStream {
        let (stream, head) = try await SSETestClient.connect(port: port, target: target, headers: headers, tls: tls,
                                                             headWithin: seconds, decoding: .lineScan)
        guard let head, head.status == 200 else {
            stream.close()
            throw HarnessFailure("\(target): " + (head.map { "status \($0.status)" } ?? "no response head"))
        }
        return CheckedStream(stream: stream, order: order, check: check, onEvents: onEvents)
    }

    /// Connects (over TLS with `tls`) and sends `GET target` without waiting for
    /// anything more (to leave before the head).
    static func sendOnly(port: Int, target: String, tls: TLSClientContext? = nil) async throws -> CheckedStream {
        let (stream, _) = try await SSETestClient.connect(port: port, target: target, tls: tls, headWithin: nil,
                                                          decoding: .lineScan)
        return CheckedStream(stream: stream, order: .increasing, check: nil)
    }

    /// Reads until at least `count` events arrived in all; false if the stream ended or `seconds` passed first.
    func read(count target: Int, within seconds: Double) async throws -> Bool {
        try await stream.read(within: seconds) { self.count >= target }
    }

    /// Reads until the event with id `id` (or a later one) arrived; false if the stream ended or `seconds` passed first.
    func read(throughID id: UInt64, within seconds: Double) async throws -> Bool {
        try await stream.read(within: seconds) { (self.last ?? 0) >= id }
    }

    /// Reads (checking events) until the response ends, up to `seconds`.
    func readToEnd(within seconds: Double) async -> SSEEnding {
        await stream.ending(upTo: seconds)
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

    /// Leaves as a well-behaved client does (a FIN, then reading until the server closes).
    func leaveGracefully(within seconds: Double) async -> SSEEnding {
        await stream.leaveGracefully(within: seconds)
    }

    /// Leaves abruptly: a reset (`SO_LINGER` 0), whatever is unread.
    func leaveAbruptly() {
        stream.leaveAbruptly()
    }

    func close() { stream.close() }
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
