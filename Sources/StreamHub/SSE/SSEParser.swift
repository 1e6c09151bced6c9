/// One event dispatched by `SSEParser`.
public struct SSEEvent: Sendable, Equatable {
    /// The stream's last event ID when this event was dispatched (it persists across
    /// events, as in the WHATWG spec); nil if no `id` field was ever seen.
    public var id: String?
    /// The `event` field; nil when absent or empty (a browser dispatches "message").
    public var event: String?
    /// The `data` lines joined by "\n".
    public var data: String

    public init(id: String?, event: String?, data: String) {
        self.id = id
        self.event = event
        self.data = data
    }
}

/// Why `SSEParser.feed` gave up. The parser's state is unspecified afterwards: drop the stream.
public enum SSEParserError: Error, Sendable, Equatable {
    /// The event being assembled (its data plus the current line) passed the limit.
    case eventTooLarge(limit: Int)
}

/// Incremental parser of `text/event-stream` per the WHATWG HTML spec, section
/// "Interpreting an event stream", for tests and the load tool. Feed bytes in any
/// chunking; get back the events they complete. Comments are counted and ignored,
/// `retry` is parsed, a leading BOM is skipped, CR, LF and CRLF all end lines (a CR
/// at the end of a chunk waits for the next to see whether an LF follows).
/// Memory is bounded by `maxEventBytes`.
public struct SSEParser: Sendable {
    private static let lf: UInt8 = 0x0A
    private static let cr: UInt8 = 0x0D
    private static let colon: UInt8 = 0x3A
    private static let space: UInt8 = 0x20
    private static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Limit of one event's buffered bytes (data so far plus the line being read).
    public let maxEventBytes: Int
    /// The last event ID buffer (persists across events; "" after an empty `id:`).
    public private(set) var lastEventID: String?
    /// The last valid `retry` value, in milliseconds.
    public private(set) var retry: Int?
    /// Comment lines seen (heartbeats are comments).
    public private(set) var comments = 0

    private var line: [UInt8] = []
    private var data: [UInt8] = []
    private var eventType: [UInt8]?
    /// The id buffer; it becomes the stream's last event ID at every dispatch.
    private var lastEventIDBuffer: String?
    /// The previous byte was a CR that ended a line; an LF now is its CRLF partner.
    private var afterCR = false
    /// Bytes of a leading BOM matched so far; nil once the stream start is behind us.
    private var bomMatched: Int? = 0

    public init(maxEventBytes: Int = 1 << 20) {
        self.maxEventBytes = maxEventBytes
    }

    /// Consumes `bytes`; returns the events they complete, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) throws(SSEParserError) -> [SSEEvent] {
        try parse(Array(bytes))
    }

    /// The same for a byte array: a concrete entry point, so callers in other
    /// modules (the load tool) run the loop specialized here.
    public mutating func feed(_ bytes: [UInt8]) throws(SSEParserError) -> [SSEEvent] {
        try parse(bytes)
    }

    private mutating func parse(_ bytes: [UInt8]) throws(SSEParserError) -> [SSEEvent] {
        var events: [SSEEvent] = []
        var index = 0
        while index < bytes.count, let matched = bomMatched {
            let byte = bytes[index]
            if byte == Self.bom[matched] {
                bomMatched = matched + 1 == Self.bom.count ? nil : matched + 1
                index += 1
                continue
            }
            bomMatched = nil
            for earlier in Self.bom[0..<matched] {
                try consume(earlier, into: &events)
            }
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == Self.cr || byte == Self.lf {
                try consume(byte, into: &events)
                index += 1
                continue
            }
            // A run of ordinary bytes joins the line in one append (the hot path:
            // a load test parses every frame of every subscriber).
            var end = index + 1
            while end < bytes.count && bytes[end] != Self.cr && bytes[end] != Self.lf { end += 1 }
            afterCR = false
            // As if appended one by one, each checked against the limit first.
            guard line.count + data.count + (end - index) <= maxEventBytes else {
                throw .eventTooLarge(limit: maxEventBytes)
            }
            line.append(contentsOf: bytes[index..<end])
            index = end
        }
        return events
    }

    private mutating func consume(_ byte: UInt8, into events: inout [SSEEvent]) throws(SSEParserError) {
        if byte == Self.lf && afterCR {
            afterCR = false
            return
        }
        afterCR = byte == Self.cr
        if byte == Self.cr || byte == Self.lf {
            if let event = processLine() { events.append(event) }
            line.removeAll(keepingCapacity: true)
            return
        }
        guard line.count + data.count < maxEventBytes else {
            throw .eventTooLarge(limit: maxEventBytes)
        }
        line.append(byte)
    }

    private mutating func processLine() -> SSEEvent? {
        if line.isEmpty { return dispatch() }
        if line[0] == Self.colon {
            comments += 1
            return nil
        }
        let name: ArraySlice<UInt8>
        var value: ArraySlice<UInt8>
        if let colon = line.firstIndex(of: Self.colon) {
            name = line[..<colon]
            value = line[(colon + 1)...]
            if value.first == Self.space { value = value.dropFirst() }
        } else {
            name = line[...]
            value = []
        }
        switch String(decoding: name, as: UTF8.self) {
        case "event":
            eventType = Array(value)
        case "data":
            data.append(contentsOf: value)
            data.append(Self.lf)
        case "id":
            if !value.contains(0) { lastEventIDBuffer = String(decoding: value, as: UTF8.self) }
        case "retry":
            if !value.isEmpty, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
               let milliseconds = Int(String(decoding: value, as: UTF8.self)) {
                retry = milliseconds
            }
        default:
            break  // Unknown fields are ignored.
        }
        return nil
    }

    private mutating func dispatch() -> SSEEvent? {
        lastEventID = lastEventIDBuffer
        defer {
            data.removeAll(keepingCapacity: true)
            eventType = nil
        }
        guard !data.isEmpty else { return nil }
        data.removeLast()  // The LF appended after the last data line.
        let type = eventType.flatMap { $0.isEmpty ? nil : String(decoding: $0, as: UTF8.self) }
        return SSEEvent(id: lastEventID, event: type, data: String(decoding: data, as: UTF8.self))
    }
}
