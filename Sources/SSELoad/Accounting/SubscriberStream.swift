import HTTPCore
import StreamHub

/// Why a subscriber's stream could not be read.
struct StreamFailure: Error, Sendable, CustomStringConvertible {
    let description: String
}

/// One subscriber's bytes turned into accounting: the HTTP response (head,
/// then a chunked or close-delimited body) through `HTTPResponseParser`, the
/// body through `SSEParser`, each event's payload through `SequenceTracker`.
/// Pure: no sockets, no clock of its own, so tests feed it bytes directly.
///
/// Latency is recorded for deliveries sent at or after `latencyFloor` — on
/// `/state` that is the moment the head arrived, so the replayed current value
/// (sent before the subscription) does not count as a slow delivery.
struct SubscriberStream: Sendable {
    private var response = HTTPResponseParser()
    private var events = SSEParser(maxEventBytes: 1 << 20)
    private var tracker: SequenceTracker
    private let channel: Channel
    /// The status of the response head, once it has arrived.
    private(set) var status: Int?
    /// When the head arrived (monotonic nanoseconds), once it has.
    private(set) var headReceivedAt: UInt64?
    /// The server ended the response (a clean end of a chunked body).
    private(set) var ended = false

    init(channel: Channel, publishers: Int) {
        self.channel = channel
        tracker = SequenceTracker(publishers: publishers)
    }

    /// Consumes bytes read at `now` (monotonic nanoseconds) and adds what they
    /// completed to `batch`.
    mutating func feed(_ bytes: [UInt8], receivedAt now: UInt64, into batch: inout DeliveryBatch) throws(StreamFailure) {
        response.append(bytes)
        while true {
            let event: HTTPResponseParser.Event?
            do {
                event = try response.next()
            } catch {
                throw StreamFailure(description: "bad HTTP response: \(error.reason)")
            }
            guard let event else { return }
            switch event {
            case .head(let head):
                if head.status < 200 { continue }
                guard status == nil else { throw StreamFailure(description: "a second response on an SSE stream") }
                status = head.status
                headReceivedAt = now
            case .body(let body):
                guard status == 200 else { continue }  // an error page: not SSE
                let parsed: [SSEEvent]
                do {
                    parsed = try events.feed(body)
                } catch {
                    throw StreamFailure(description: "bad event stream: \(error)")
                }
                for event in parsed { account(event, receivedAt: now, into: &batch) }
            case .end:
                ended = true
                return
            }
        }
    }

    private mutating func account(_ event: SSEEvent, receivedAt now: UInt64, into batch: inout DeliveryBatch) {
        guard let payload = Payload(parsing: event.data) else {
            batch.unrecognized += 1
            return
        }
        switch tracker.record(publisher: payload.publisher, sequence: payload.sequence) {
        case .unrecognized:
            batch.unrecognized += 1
            return
        case .duplicate: batch.duplicates += 1
        case .outOfOrder: batch.outOfOrder += 1
        case .fresh: break
        }
        batch.received += 1
        batch.lastTag = payload.tag
        let floor = channel == .state ? headReceivedAt ?? 0 : 0
        if payload.sentNanos >= floor && now >= payload.sentNanos {
            batch.latencies.append(now - payload.sentNanos)
        }
    }
}
