import HTTPCore

/// Why a topic or event name was refused. `reason` is the one-line plain-text
/// body of the `400` answer; it never echoes the client's bytes back.
public struct TopicError: Error, Equatable, Sendable {
    /// What was being validated; it names the thing in `reason`.
    public enum Subject: Sendable, Equatable {
        case topic
        case eventName
    }

    /// The rule that was broken.
    public enum Problem: Error, Sendable, Equatable {
        /// Nothing after `/state/` or `/events/`, or an empty `?event=`.
        case empty
        /// `a//b`, a leading or a trailing `/`.
        case emptySegment
        /// A segment that is `.` or `..`, written plainly or percent-encoded.
        case dotSegment
        /// `%2F` inside a segment: a slash that would not split the name.
        case encodedSlash
        /// A `%` not followed by two hex digits.
        case malformedEscape
        /// A byte outside `A-Z a-z 0-9 . _ ~ -` (and `/` between topic segments).
        case disallowedCharacter
        /// More than `TopicName.maximumBytes` bytes once decoded.
        case tooLong
    }

    public let subject: Subject
    public let problem: Problem

    public init(subject: Subject, problem: Problem) {
        self.subject = subject
        self.problem = problem
    }

    /// One line for the `400` body, e.g. "topic has an empty segment".
    public var reason: String {
        let what = subject == .topic ? "topic" : "event name"
        switch problem {
        case .empty: return "\(what) is empty"
        case .emptySegment: return "\(what) has an empty segment (leading, trailing or double '/')"
        case .dotSegment: return "\(what) has a '.' or '..' segment"
        case .encodedSlash: return "\(what) contains an encoded slash (%2F)"
        case .malformedEscape: return "\(what) has a malformed percent-escape"
        case .disallowedCharacter:
            return subject == .topic
                ? "topic may contain only A-Z a-z 0-9 . _ ~ - and /"
                : "event name may contain only A-Z a-z 0-9 . _ ~ -"
        case .tooLong: return "\(what) is longer than \(TopicName.maximumBytes) bytes"
        }
    }
}

/// A topic name read from the raw, still percent-encoded request path.
///
/// Promises: an accepted name is 1 to `maximumBytes` bytes of
/// `A-Z a-z 0-9 . _ ~ -` and `/`, made of non-empty segments none of which is
/// `.` or `..`; so it is safe as a key, in a log line, and in a file path.
/// Names are case-sensitive and returned decoded. A percent-escape of an
/// allowed character (`%41` for `A`, `%7E` for `~`) is accepted and decoded, as
/// RFC 3986 says such escapes are equivalent to the character itself, so
/// `/events/%41` and `/events/A` are the same topic. Escapes are decoded once:
/// `%2541` is the bytes `%41`, refused for the `%`.
public enum TopicName {
    /// The longest accepted name, in decoded bytes.
    public static let maximumBytes = 200

    /// Validates `remainder`, the raw path after `/state/` or `/events/`.
    public static func parse(rawPath remainder: Substring) -> Result<String, TopicError> {
        func fail(_ problem: TopicError.Problem) -> Result<String, TopicError> {
            .failure(TopicError(subject: .topic, problem: problem))
        }
        if remainder.isEmpty { return fail(.empty) }
        // Every decoded byte costs at least one raw byte and at most three, so
        // a remainder this long can only be refused; don't decode it at all.
        if remainder.utf8.count > 3 * maximumBytes { return fail(.tooLong) }

        if let plain = plainName(remainder) { return .success(plain) }

        var name: [UInt8] = []
        for rawSegment in remainder.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false) {
            switch validateSegment(Substring(rawSegment)) {
            case .failure(let problem): return fail(problem)
            case .success(let segment):
                if !name.isEmpty { name.append(UInt8(ascii: "/")) }
                name += segment
            }
        }
        if name.count > maximumBytes { return fail(.tooLong) }
        return .success(String(decoding: name, as: UTF8.self))
    }

    /// The name when `remainder` is already one as it stands: no escape, only allowed
    /// bytes, no empty or dot segment, not too long. One pass, no decoding; nil sends
    /// anything else (escapes, and every refusal) through the segment-by-segment path.
    private static func plainName(_ remainder: Substring) -> String? {
        guard remainder.utf8.count <= maximumBytes else { return nil }
        // Scanned in place: iterating the `Substring`'s view byte by byte cost about 75
        // instructions a byte (issue 27).
        return remainder.withUTF8Bytes(isPlain) ? String(remainder) : nil
    }

    /// Whether `bytes` are a name as they stand (see `plainName`).
    private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var length = 0, onlyDots = true  // of the current segment
        for byte in bytes {
            if byte == UInt8(ascii: "/") {
                guard length > 0, !(onlyDots && length <= 2) else { return false }
                length = 0
                onlyDots = true
            } else {
                guard byte != UInt8(ascii: "%"), isUnreserved(byte) else { return false }
                length += 1
                if byte != UInt8(ascii: ".") { onlyDots = false }
            }
        }
        return length > 0 && !(onlyDots && length <= 2)
    }

    /// True when `name`, taken as already decoded (a `%` is just a refused byte),
    /// is a topic name: what a client that builds names, such as `sse-load`, checks.
    public static func isValid(decoded name: String) -> Bool {
        !name.utf8.contains(UInt8(ascii: "%")) && (try? parse(rawPath: Substring(name)).get()) != nil
    }
}

/// The SSE event type a publisher names with `?event=<name>`.
///
/// Promises: an accepted name is exactly one valid topic segment — 1 to
/// `TopicName.maximumBytes` bytes of `A-Z a-z 0-9 . _ ~ -`, not `.` or `..` —
/// so it can never break an `event:` line. The input is the raw query value;
/// percent-escapes are decoded once, as for topics, and the decoded name is returned.
public enum EventName {
    public static func validate(_ name: String) -> Result<String, TopicError> {
        func fail(_ problem: TopicError.Problem) -> Result<String, TopicError> {
            .failure(TopicError(subject: .eventName, problem: problem))
        }
        if name.isEmpty { return fail(.empty) }
        if name.utf8.count > 3 * TopicName.maximumBytes { return fail(.tooLong) }
        if name.utf8.contains(UInt8(ascii: "/")) { return fail(.disallowedCharacter) }
        switch validateSegment(Substring(name)) {
        case .failure(let problem): return fail(problem)
        case .success(let bytes):
            if bytes.count > TopicName.maximumBytes { return fail(.tooLong) }
            return .success(String(decoding: bytes, as: UTF8.self))
        }
    }
}

/// One raw segment (no `/` in it) decoded and checked against the segment rules.
private func validateSegment(_ raw: Substring) -> Result<[UInt8], TopicError.Problem> {
    if raw.isEmpty { return .failure(.emptySegment) }
    guard let bytes = PercentDecoding.decode(raw) else { return .failure(.malformedEscape) }
    if bytes.contains(UInt8(ascii: "/")) { return .failure(.encodedSlash) }
    if bytes == [UInt8(ascii: ".")] || bytes == [UInt8(ascii: "."), UInt8(ascii: ".")] {
        return .failure(.dotSegment)
    }
    guard bytes.allSatisfy(isUnreserved) else { return .failure(.disallowedCharacter) }
    return .success(bytes)
}

/// RFC 3986 "unreserved": `A-Z a-z 0-9 - . _ ~`.
private func isUnreserved(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
         UInt8(ascii: "0")...UInt8(ascii: "9"),
         UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
        return true
    default:
        return false
    }
}
