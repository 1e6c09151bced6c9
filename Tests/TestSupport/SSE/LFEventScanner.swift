import Glibc
import StreamHub

/// A fast reader of the event streams the gateway writes, for tests that read
/// megabytes in a debug build (where the spec-complete `SSEParser` goes byte by
/// byte, about 120 ns a byte here): lines are found with `memchr`, so the cost
/// is per line. It follows the spec's field rules (`id`, `event`, `data` joined
/// by LF, `retry`, comments, one space after the colon dropped, unknown fields
/// ignored, the last id kept across events) but only LF ends a line: the
/// gateway never writes CR, and if it did the id check of the tests would see
/// an id ending in CR and fail. `SSEParserTests` check `SSEParser` against the
/// spec, and the end-to-end tests check the gateway's frames with it.
public struct LFEventScanner {
    /// The end of the last read that did not end a line.
    private var partial: [UInt8] = []
    private var lastEventID: String?
    private var idBuffer: String?
    private var eventType: String?
    private var data: [UInt8] = []
    private var hasData = false

    public init() {}

    /// Consumes `bytes`; returns the events they complete, in order.
    public mutating func feed(_ bytes: [UInt8]) -> [SSEEvent] {
        var events: [SSEEvent] = []
        let input = partial.isEmpty ? bytes : partial + bytes
        partial = []
        input.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            var start = 0
            while start < buffer.count {
                guard let found = memchr(base + start, 0x0A, buffer.count - start) else {
                    partial = Array(buffer[start...])
                    return
                }
                let end = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if let event = line(UnsafeBufferPointer(rebasing: buffer[start..<end])) { events.append(event) }
                start = end + 1
            }
        }
        return events
    }

    private mutating func line(_ line: UnsafeBufferPointer<UInt8>) -> SSEEvent? {
        if line.isEmpty { return dispatch() }
        if line[0] == UInt8(ascii: ":") { return nil }
        var colon = 0
        while colon < line.count && line[colon] != UInt8(ascii: ":") { colon += 1 }
        var valueStart = min(colon + 1, line.count)
        if valueStart < line.count && line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let name = String(decoding: UnsafeBufferPointer(rebasing: line[0..<colon]), as: UTF8.self)
        let value = UnsafeBufferPointer(rebasing: line[valueStart...])
        switch name {
        case "data":
            if hasData { data.append(0x0A) }
            data.append(contentsOf: value)
            hasData = true
        case "id":
            if !value.contains(0) { idBuffer = String(decoding: value, as: UTF8.self) }
        case "event":
            eventType = String(decoding: value, as: UTF8.self)
        default:
            break
        }
        return nil
    }

    private mutating func dispatch() -> SSEEvent? {
        lastEventID = idBuffer
        defer {
            data.removeAll(keepingCapacity: true)
            hasData = false
            eventType = nil
        }
        guard hasData else { return nil }
        return SSEEvent(id: lastEventID, event: eventType.flatMap { $0.isEmpty ? nil : $0 },
                        data: String(decoding: data, as: UTF8.self))
    }
}
