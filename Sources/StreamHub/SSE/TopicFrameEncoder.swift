/// The frames of several-topic streams (API.md, "Several topics in one stream"): each
/// value is one event whose data is one line of JSON naming its topic,
///
///     event: <name>            (only when the publisher named one)
///     data: {"topic":"chat/1","id":"41","event":"<name>","data":"<value>"}
///
/// with no `id:` line: on `/events` the stream's cursor goes there, and it differs per
/// subscriber, so the gateway writes it in front of this shared frame at write time.
///
/// Choices: the value in the JSON is what a single-topic stream's reader gets, every
/// line break (CR, LF, CRLF) as LF, so a frame encoded live and one derived from the
/// stored single-topic frame (`fields(of:)`, for a replay or a state snapshot) are
/// byte for byte the same. Ids are JSON strings (a `UInt64` does not fit a JS number).
public enum TopicFrameEncoder {
    private static let lf: UInt8 = 0x0A
    private static let cr: UInt8 = 0x0D

    /// One value of `topic`: `[event: <name>\n]data: {…}\n\n`.
    public static func event(topic: String, id: UInt64, event: String?, data: String) -> [UInt8] {
        let name = event.map { $0.utf8.filter { $0 != cr && $0 != lf } } ?? []
        var out: [UInt8] = []
        out.reserveCapacity(data.utf8.count + topic.utf8.count + 2 * name.count + 60)
        if !name.isEmpty {
            out.append(contentsOf: "event: ".utf8)
            out.append(contentsOf: name)
            out.append(lf)
        }
        out.append(contentsOf: "data: {\"topic\":".utf8)
        appendJSONString(topic.utf8, to: &out)
        out.append(contentsOf: ",\"id\":\"".utf8)
        out.append(contentsOf: String(id).utf8)
        out.append(UInt8(ascii: "\""))
        if !name.isEmpty {
            out.append(contentsOf: ",\"event\":".utf8)
            appendJSONString(name, to: &out)
        }
        out.append(contentsOf: ",\"data\":".utf8)
        appendJSONString(data.utf8, to: &out)
        out.append(contentsOf: "}\n\n".utf8)
        return out
    }

    /// `event: gap\ndata: {"topic":"<t>","id":"<N+1>"}\n\n`: the first id of `topic` the
    /// stream can no longer have. No `id:` line: the cursor does not move.
    public static func gap(topic: String, firstMissingID: UInt64) -> [UInt8] {
        var out = Array("event: gap\ndata: {\"topic\":".utf8)
        appendJSONString(topic.utf8, to: &out)
        out.append(contentsOf: ",\"id\":\"".utf8)
        out.append(contentsOf: String(firstMissingID).utf8)
        out.append(contentsOf: "\"}\n\n".utf8)
        return out
    }

    /// The event name and value of a frame `SSEEncoder.event` wrote (lines joined by
    /// LF, as a reader gets them).
    public static func fields(of frame: [UInt8]) -> (event: String?, data: String) {
        var event: String?
        var lines: [ArraySlice<UInt8>] = []
        for line in frame.split(separator: lf, omittingEmptySubsequences: false) {
            if line.starts(with: "data: ".utf8) {
                lines.append(line.dropFirst(6))
            } else if line.starts(with: "event: ".utf8) {
                event = String(decoding: line.dropFirst(7), as: UTF8.self)
            }
        }
        let data = lines.map { String(decoding: $0, as: UTF8.self) }.joined(separator: "\n")
        return (event, data)
    }

    /// Appends `text` as a JSON string: `"` and `\` escaped, a line break as `\n`
    /// (CRLF as one), other control characters as `\u00XX`.
    private static func appendJSONString<S: Sequence<UInt8>>(_ text: S, to out: inout [UInt8]) {
        let hex = Array("0123456789abcdef".utf8)
        out.append(UInt8(ascii: "\""))
        var afterCR = false
        for byte in text {
            if byte == lf && afterCR {
                afterCR = false
                continue
            }
            afterCR = byte == cr
            switch byte {
            case cr, lf:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case UInt8(ascii: "\""), UInt8(ascii: "\\"):
                out.append(UInt8(ascii: "\\"))
                out.append(byte)
            case 0x09:
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            default:
                out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
