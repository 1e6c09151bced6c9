import Foundation
import StreamHub
import TestSupport

/// An SSE subscriber of the failover tests: every event checked as it arrives —
/// ids only ever go up, each once, and an id that skips ahead comes right after a
/// `gap` event naming the first one it can no longer have (the data of one topic's
/// stream, the `id` of several topics'). What it received is kept
/// (id → data) to check afterwards that every acknowledged publish arrived. Used from one task.
final class FailoverStream {
    let stream: SSETestClient
    private(set) var last: UInt64 = 0
    private(set) var received: [UInt64: String] = [:]
    /// Ids announced lost by `gap` events (from the gap's id up to the next id received).
    private(set) var lost: [ClosedRange<UInt64>] = []
    private(set) var problem: String?
    private var pendingGap: UInt64?

    private init(stream: SSETestClient) {
        self.stream = stream
    }

    /// Opens `target` on 127.0.0.1:`port`; throws unless the head is `200` within 30 s.
    static func open(port: Int, target: String, headers: [(String, String)] = []) async throws -> FailoverStream {
        let (stream, head) = try await SSETestClient.connect(port: port, target: target, headers: headers, headWithin: 30)
        guard let head, head.status == 200 else {
            stream.close()
            throw HarnessFailure("GET \(target) answered \(head.map { String($0.status) } ?? "nothing")")
        }
        let checked = FailoverStream(stream: stream)
        stream.onEvents = { [unowned checked] events in events.forEach(checked.accept) }
        return checked
    }

    private func accept(_ event: SSEEvent) {
        if event.event == "gap" {
            // One topic's stream: the data is the first id; several topics': `{"topic":…,"id":"…"}`.
            let digits = event.data.range(of: #""id":""#).map { event.data[$0.upperBound...] } ?? event.data[...]
            guard let first = UInt64(digits.prefix { $0.isNumber }), first > 0 else {
                problem = problem ?? "a gap event without an id: \(event.data)"
                return
            }
            pendingGap = pendingGap ?? first  // Two in a row (runs skipped one after another): the first counts.
            return
        }
        guard let text = event.id, let id = UInt64(text) else {
            problem = problem ?? "an event without a decimal id"
            return
        }
        if id <= last {
            problem = problem ?? "id \(id) after \(last): backwards or twice"
        } else if id != last + 1 {
            if let gap = pendingGap, gap == last + 1 {
                lost.append(gap...(id - 1))
            } else {
                problem = problem ?? "id \(id) after \(last) without a gap event"
            }
        }
        pendingGap = nil
        received[id] = event.data
        last = max(last, id)
    }

    /// Reads until id `id` arrived; false when the stream ended or `seconds` passed first.
    func read(through id: UInt64, within seconds: Double) async throws -> Bool {
        try await stream.read(within: seconds) { last >= id }
    }

    /// Whether `id` arrived with `data`, or was announced lost by a gap.
    func has(_ id: UInt64, _ data: String) -> Bool {
        received[id] == data || lost.contains { $0.contains(id) }
    }

    func close() { stream.close() }
}
