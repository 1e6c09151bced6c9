import StreamHub

/// libFuzzer target `sse`: the SSE frame encoder, checked with the SSE parser.
///
/// Input: byte 0 holds flags (bit 0: an id follows, 8 bytes; bit 1: an event name follows,
/// a length byte then the name) and the number of cut points (bits 2-4, two bytes each);
/// the rest is the value. Name and value are made valid UTF-8 (`String(decoding:)`).
///
/// Oracles, beyond "never traps, never hangs":
/// - `SSEEncoder.event(id:event:data:)` framed by a retry line, heartbeats and a gap event,
///   parsed back per the WHATWG rules (whole, and cut at the fuzzer's points), gives the
///   value with CR and CRLF turned into LF, the id, the name without CR/LF (absent when
///   empty), then the gap event; the retry and both heartbeats are seen;
/// - the parser, fed the raw value bytes as a stream, reports the same events, state and
///   refusal whole, cut, or one byte at a time.
@_cdecl("LLVMFuzzerTestOneInput")
public func sseEncoderFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    var input = FuzzInput(data, size)
    let flags = input.byte()
    let id: UInt64? = flags & 1 != 0 ? input.uint64() : nil
    let name: String? = flags & 2 != 0 ? String(decoding: input.take(Int(input.byte())), as: UTF8.self) : nil
    let cuts = input.cuts(count: Int(flags >> 2 & 7))
    let payload = input.rest()
    let value = String(decoding: payload, as: UTF8.self)

    checkEncoding(id: id, name: name, value: value, cuts: cuts, input: payload)
    checkParserSplits(payload, cuts: cuts, maxEventBytes: 1 + Int(flags >> 5) * 64)
    return 0
}

/// An encoded event, between a retry, heartbeats and a gap event, parses back as promised.
func checkEncoding(id: UInt64?, name: String?, value: String, cuts: [Int], input: [UInt8]) {
    let frame = SSEEncoder.event(id: id, event: name, data: value)
    fuzzCheck(!frame.contains(0x0D), "CR in a frame", input: input)
    fuzzCheck(frame.suffix(2) == [0x0A, 0x0A] && !Array(frame.dropLast()).contains(subsequence: [0x0A, 0x0A]),
              "frame is not one event ending in a blank line", input: input)

    let stream = SSEEncoder.retry(milliseconds: 1500) + SSEEncoder.heartbeat + frame
        + SSEEncoder.heartbeat + SSEEncoder.gap(firstMissingID: 5)
    let cleanName = name.map { String(decoding: $0.utf8.filter { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self) }
    let expected = [
        SSEEvent(id: id.map { String($0) }, event: cleanName?.isEmpty == false ? cleanName : nil,
                 data: normalizedLineEnds(value)),
        SSEEvent(id: id.map { String($0) }, event: "gap", data: "5"),  // the id persists
    ]
    for split in [[stream], pieces(stream, at: cuts)] {
        var parser = SSEParser()
        var events: [SSEEvent] = []
        do {
            for piece in split { events += try parser.feed(piece) }
        } catch {
            fuzzCheck(false, "parser refused an encoded stream: \(error)", input: input)
        }
        fuzzCheck(events == expected, "parsed \(events) != expected \(expected)", input: input)
        fuzzCheck(parser.retry == 1500 && parser.comments == 2, "retry or heartbeats lost", input: input)
    }
}

/// CRLF, then lone CR, as LF: what an SSE parser makes of line ends inside a value.
func normalizedLineEnds(_ value: String) -> String {
    var out: [UInt8] = []
    var afterCR = false
    for byte in value.utf8 {
        defer { afterCR = byte == 0x0D }
        if byte == 0x0A && afterCR { continue }
        out.append(byte == 0x0D ? 0x0A : byte)
    }
    return String(decoding: out, as: UTF8.self)
}

/// What the parser made of a stream: its events and final state, or only its refusal
/// (the events of the failing call are lost with it).
struct ParserOutcome: Equatable {
    var events: [SSEEvent] = []
    var error: SSEParserError?
    var lastEventID: String?
    var retry: Int?
    var comments = 0

    init(error: SSEParserError) { self.error = error }

    init(pieces: [[UInt8]], maxEventBytes: Int) {
        var parser = SSEParser(maxEventBytes: maxEventBytes)
        do {
            for piece in pieces { events += try parser.feed(piece) }
        } catch {
            self = ParserOutcome(error: error)
            return
        }
        lastEventID = parser.lastEventID
        retry = parser.retry
        comments = parser.comments
    }
}

/// The parser's result on arbitrary bytes does not depend on how they were cut.
func checkParserSplits(_ payload: [UInt8], cuts: [Int], maxEventBytes: Int) {
    let whole = ParserOutcome(pieces: [payload], maxEventBytes: maxEventBytes)
    for (name, split) in [("cut", pieces(payload, at: cuts)), ("bytewise", bytewise(payload))] {
        let other = ParserOutcome(pieces: split, maxEventBytes: maxEventBytes)
        fuzzCheck(other == whole, "\(name) parse \(other) differs from whole \(whole)", input: payload)
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { self[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}
