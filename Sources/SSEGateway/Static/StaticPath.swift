import HTTPCore

/// A request path turned into a path below the static root, or refused.
///
/// Works on the percent-encoded path as sent, one segment at a time, so an
/// encoded `/`, `.` or NUL can never merge or split segments after decoding.
/// What it refuses (every refusal is a `404` to the client):
/// - a path that does not start with `/`, or has an empty segment (`a//b`);
/// - a malformed escape (`%`, `%2`, `%zz`) or a segment that is not UTF-8;
/// - a segment that decodes to contain `/`, NUL or another control byte;
/// - a segment that decodes to start with `.`: `.` and `..` in any spelling
///   (`%2e%2e`, `%2E%2e`), and hidden files such as `.git` or `.env`.
struct StaticPath: Sendable, Equatable {
    /// Decoded segments, in order; none is empty, none starts with `.`.
    var segments: [String]
    /// The path ended in `/` (or was `/`): only a directory may answer it.
    var wantsDirectory: Bool

    init?(rawPath: String) {
        let bytes = Array(rawPath.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return nil }
        var parts = bytes.dropFirst().split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        wantsDirectory = parts.last?.isEmpty ?? true
        if wantsDirectory { parts.removeLast() }
        var segments: [String] = []
        segments.reserveCapacity(parts.count)
        for part in parts {
            guard let segment = Self.decodeSegment(part) else { return nil }
            segments.append(segment)
        }
        self.segments = segments
    }

    /// The segments joined with `/`: a path relative to the root ("" for the root itself).
    var relative: String { segments.joined(separator: "/") }

    /// Percent-decodes one segment (`PercentDecoding`) and checks what it decodes to.
    private static func decodeSegment(_ encoded: ArraySlice<UInt8>) -> String? {
        guard let decoded = PercentDecoding.decode(String(decoding: encoded, as: UTF8.self)) else { return nil }
        // `/` would add a level, NUL would cut the C path, control bytes have no business in a file name.
        guard decoded.allSatisfy({ $0 != UInt8(ascii: "/") && $0 >= 0x20 && $0 != 0x7F }) else { return nil }
        guard let first = decoded.first, first != UInt8(ascii: ".") else { return nil }
        return String(validating: decoded, as: UTF8.self)
    }
}
