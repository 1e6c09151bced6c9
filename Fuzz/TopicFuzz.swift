import GatewayAPI
import HTTPCore

/// libFuzzer target `topic`: topic names, event names, `Last-Event-ID` and the query
/// decoding in front of event names.
///
/// Input: the whole input is the text (made valid UTF-8 with `String(decoding:)`; the
/// request parser only ever hands over ASCII, so this is a superset).
///
/// Oracles, beyond "never traps, never hangs": each validator agrees exactly with a
/// reference written from API.md ("Topics", "Subscribing") rather than from the code;
/// an accepted topic or event name re-checks against the documented rules byte by byte
/// and validates again to itself.
@_cdecl("LLVMFuzzerTestOneInput")
public func topicFuzz(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let input = FuzzInput(data, size).restCopy()
    let text = String(decoding: input, as: UTF8.self)

    let topic = try? TopicName.parse(rawPath: Substring(text)).get()
    fuzzCheck(topic == referenceTopic(text), "topic \(String(describing: topic)) != reference", input: input)
    if let topic {
        checkDocumentedRules(topic, slashes: true, input: input)
        fuzzCheck(TopicName.parse(rawPath: Substring(topic)) == .success(topic), "topic not a fixed point", input: input)
    }

    let event = try? EventName.validate(text).get()
    fuzzCheck(event == referenceEventName(text), "event name \(String(describing: event)) != reference", input: input)
    if let event {
        checkDocumentedRules(event, slashes: false, input: input)
        fuzzCheck(EventName.validate(event) == .success(event), "event name not a fixed point", input: input)
    }

    let id = LastEventID.parse(text)
    fuzzCheck(id == referenceLastEventID(text), "Last-Event-ID \(String(describing: id)) != reference", input: input)

    // The publish path: `?event=` goes through the query decoder, then the validator.
    if let items = PercentDecoding.queryItems(text), let name = items.last(where: { $0.name == "event" })?.value {
        _ = EventName.validate(name)
    }
    fuzzCheck(PercentDecoding.decode(text) == referencePercentDecode(Array(text.utf8)), "percent-decoding differs", input: input)
    return 0
}

extension FuzzInput {
    /// The whole input, as this target has no control bytes.
    func restCopy() -> [UInt8] {
        var copy = self
        return copy.rest()
    }
}

/// API.md "Topics": 1 to 200 bytes of `A-Z a-z 0-9 . _ ~ -` and `/`; no empty, `.` or `..`
/// segment (also percent-encoded); no encoded slash; case-sensitive. Escapes of allowed
/// characters decode once (RFC 3986 equivalence, TopicName's promise).
func referenceTopic(_ raw: String) -> String? {
    let segments = Array(raw.utf8).split(separator: 0x2F, omittingEmptySubsequences: false)
    var decoded: [[UInt8]] = []
    for segment in segments {
        guard let name = referenceSegment(Array(segment)) else { return nil }
        decoded.append(name)
    }
    let name = Array(decoded.joined(separator: [0x2F]))
    guard (1...200).contains(name.count) else { return nil }
    return String(decoding: name, as: UTF8.self)
}

/// An event name is one topic segment: no `/` at all, raw or encoded.
func referenceEventName(_ raw: String) -> String? {
    guard !raw.utf8.contains(0x2F), let name = referenceSegment(Array(raw.utf8)), name.count <= 200 else { return nil }
    return String(decoding: name, as: UTF8.self)
}

/// A decoded segment, or nil when it breaks a rule.
func referenceSegment(_ raw: [UInt8]) -> [UInt8]? {
    guard !raw.isEmpty, let bytes = referencePercentDecode(raw) else { return nil }
    let allowed = Set(Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-".utf8))
    guard bytes.allSatisfy(allowed.contains), bytes != Array(".".utf8), bytes != Array("..".utf8) else { return nil }
    return bytes
}

/// `%XX` (either case) decoded once; nil on a `%` without two hex digits.
func referencePercentDecode(_ raw: [UInt8]) -> [UInt8]? {
    var out: [UInt8] = []
    var i = 0
    while i < raw.count {
        if raw[i] == 0x25 {
            guard i + 2 < raw.count, let value = UInt8(String(decoding: raw[(i + 1)...(i + 2)], as: UTF8.self), radix: 16),
                  raw[(i + 1)...(i + 2)].allSatisfy({ $0 != 0x2B && $0 != 0x2D }) else { return nil }
            out.append(value)
            i += 3
        } else {
            out.append(raw[i])
            i += 1
        }
    }
    return out
}

/// API.md "Subscribing": a decimal number (1 to 20 ASCII digits, LastEventID's promise)
/// that fits the id type; anything else counts as absent.
func referenceLastEventID(_ text: String) -> UInt64? {
    let digits = Array(text.utf8)
    guard (1...20).contains(digits.count) else { return nil }
    var value: UInt64 = 0
    for digit in digits {
        guard (0x30...0x39).contains(digit) else { return nil }
        let (times10, o1) = value.multipliedReportingOverflow(by: 10)
        let (sum, o2) = times10.addingReportingOverflow(UInt64(digit - 0x30))
        if o1 || o2 { return nil }
        value = sum
    }
    return value
}

/// The promise on an accepted name, checked byte by byte.
func checkDocumentedRules(_ name: String, slashes: Bool, input: [UInt8]) {
    let bytes = Array(name.utf8)
    fuzzCheck((1...200).contains(bytes.count), "accepted name of \(bytes.count) bytes", input: input)
    for byte in bytes {
        let ok = (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte)
            || byte == 0x2E || byte == 0x5F || byte == 0x7E || byte == 0x2D || (slashes && byte == 0x2F)
        fuzzCheck(ok, "accepted name holds byte \(byte)", input: input)
    }
    for segment in bytes.split(separator: 0x2F, omittingEmptySubsequences: false) {
        fuzzCheck(!segment.isEmpty && Array(segment) != [0x2E] && Array(segment) != [0x2E, 0x2E],
                  "accepted name has an empty or dot segment", input: input)
    }
}
