import HTTPCore

/// What the loader learned about a served file from `fstat`: enough to build
/// its validators without reading it.
struct StaticFileInfo: Sendable, Equatable {
    /// Size in bytes when it was opened.
    var size: Int
    /// Modification time, seconds since the epoch.
    var modifiedSeconds: Int
    /// The sub-second part of the modification time, so two writes in one second differ.
    var modifiedNanoseconds: Int

    /// A strong entity tag from size and modification time (as nginx does):
    /// it changes whenever the file is rewritten, without hashing its bytes.
    var etag: String {
        "\"\(String(size, radix: 16))-\(String(modifiedSeconds, radix: 16))-\(String(modifiedNanoseconds, radix: 16))\""
    }

    var lastModified: String { HTTPDate.format(modifiedSeconds) }
}

/// A request's conditional headers (RFC 9110 §13), read once and checked
/// against a file's validators.
struct ConditionalRequest: Sendable, Equatable {
    /// Every `If-None-Match` value joined with `,`, or nil when absent.
    var ifNoneMatch: String?
    /// The `If-Modified-Since` value, or nil when absent.
    var ifModifiedSince: String?

    init(headers: HTTPHeaders) {
        let tags = headers.values(for: "If-None-Match")
        ifNoneMatch = tags.isEmpty ? nil : tags.joined(separator: ",")
        ifModifiedSince = headers["If-Modified-Since"]
    }

    /// Whether a GET or HEAD of this file should answer `304 Not Modified`.
    /// `If-None-Match` wins when present (compared weakly, `*` matches any file);
    /// otherwise an `If-Modified-Since` no older than the file's modification
    /// second matches. An unparseable date is ignored, as the RFC asks.
    func isNotModified(_ file: StaticFileInfo) -> Bool {
        if let ifNoneMatch {
            let current = Self.opaque(file.etag)
            return ifNoneMatch.split(separator: ",").contains { candidate in
                let tag = candidate.trimmingSpaces
                return tag == "*" || Self.opaque(tag) == current
            }
        }
        if let ifModifiedSince, let since = HTTPDate.parse(String(ifModifiedSince.trimmingSpaces)) {
            return file.modifiedSeconds <= since
        }
        return false
    }

    /// The quoted tag without a weak `W/` prefix: weak comparison.
    private static func opaque<S: StringProtocol>(_ tag: S) -> Substring {
        let tag = Substring(tag)
        return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }
}

extension StringProtocol {
    /// The text without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate var trimmingSpaces: SubSequence {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }),
              let last = lastIndex(where: { !isSpace($0) })
        else { return self[endIndex...] }
        return self[first...last]
    }
}
