/// A validated request line (`METHOD SP request-target SP HTTP-version`, RFC 9112 §3),
/// with the target split into its still percent-encoded path and its query.
///
/// Accepts origin-form (`/path?query`), asterisk-form (`*`, for `OPTIONS` only) and
/// absolute-form (`http://host/path?query`, whose path and query are taken). Anything
/// else is a `400`; a well-formed but unsupported version is a `505`.
struct HTTPRequestLine: Sendable, Equatable {
    var method: String
    var target: String
    var rawPath: String
    var query: String?
    var version: HTTPVersion

    /// A line of these parts, as they are (an HTTP/2 request's pseudo-header fields, a test's head).
    init(method: String, target: String, rawPath: String, query: String?, version: HTTPVersion) {
        self.method = method
        self.target = target
        self.rawPath = rawPath
        self.query = query
        self.version = version
    }

    /// Parses `line`, the request line without its line end. The target's length was
    /// already bounded by the caller while the line arrived.
    init(parsing line: UnsafeRawBufferPointer) throws(HTTPParseError) {
        typealias S = HTTPSyntax
        guard let firstSpace = S.firstIndex(of: S.space, in: line),
              let secondSpace = S.firstIndex(of: S.space, in: line, from: firstSpace + 1) else {
            throw HTTPParseError(.badRequest, "malformed request line: expected method, target and version")
        }
        guard S.firstIndex(of: S.space, in: line, from: secondSpace + 1) == nil else {
            throw HTTPParseError(.badRequest, "malformed request line: extra spaces")
        }
        let method = UnsafeRawBufferPointer(rebasing: line[0..<firstSpace])
        let target = UnsafeRawBufferPointer(rebasing: line[(firstSpace + 1)..<secondSpace])
        let version = UnsafeRawBufferPointer(rebasing: line[(secondSpace + 1)...])

        guard !method.isEmpty, method.allSatisfy(S.isTokenChar) else {
            throw HTTPParseError(.badRequest, "malformed request line: invalid method")
        }
        guard !target.isEmpty else {
            throw HTTPParseError(.badRequest, "malformed request line: empty request target")
        }
        guard target.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw HTTPParseError(.badRequest, "invalid character in request target")
        }
        self.version = try Self.parseVersion(version)
        self.method = Self.methodName(method)
        let targetString = S.string(target)
        self.target = targetString

        if target[0] == S.slash {
            (rawPath, query) = Self.split(target, whole: targetString)
        } else if target.count == 1 && target[0] == S.asterisk {
            guard self.method == "OPTIONS" else {
                throw HTTPParseError(.badRequest, "request target * is only allowed for OPTIONS")
            }
            (rawPath, query) = ("*", nil)
        } else if let pathStart = Self.pathStartOfAbsoluteForm(target) {
            let rest = UnsafeRawBufferPointer(rebasing: target[pathStart...])
            if rest.first == S.slash {
                (rawPath, query) = Self.split(rest, whole: nil)
            } else {
                // `http://host` or `http://host?q`: the path is `/`.
                rawPath = "/"
                query = rest.isEmpty ? nil : S.string(UnsafeRawBufferPointer(rebasing: rest[1...]))
            }
        } else {
            throw HTTPParseError(.badRequest, "request target must start with /")
        }
    }

    /// The method as a `String`: a constant for the methods the server serves (no decoding,
    /// no allocation), otherwise the token's bytes.
    private static func methodName(_ method: UnsafeRawBufferPointer) -> String {
        typealias S = HTTPSyntax
        switch method.count {
        case 3 where S.equals(method, "GET"): return "GET"
        case 4 where S.equals(method, "POST"): return "POST"
        case 4 where S.equals(method, "HEAD"): return "HEAD"
        case 7 where S.equals(method, "OPTIONS"): return "OPTIONS"
        default: return S.string(method)
        }
    }

    /// Splits `/path?query` at the first `?`; reuses `whole` for the path when there is no query.
    private static func split(_ target: UnsafeRawBufferPointer, whole: String?) -> (String, String?) {
        guard let mark = HTTPSyntax.firstIndex(of: HTTPSyntax.question, in: target) else {
            return (whole ?? HTTPSyntax.string(target), nil)
        }
        return (HTTPSyntax.string(UnsafeRawBufferPointer(rebasing: target[..<mark])),
                HTTPSyntax.string(UnsafeRawBufferPointer(rebasing: target[(mark + 1)...])))
    }

    /// For `http://authority...` or `https://authority...`: the index where the path (or query)
    /// begins, after a non-empty authority; nil when `target` is not in absolute-form.
    private static func pathStartOfAbsoluteForm(_ target: UnsafeRawBufferPointer) -> Int? {
        let schemeLength: Int
        if HTTPSyntax.hasPrefixIgnoringCase(target, "http://") {
            schemeLength = 7
        } else if HTTPSyntax.hasPrefixIgnoringCase(target, "https://") {
            schemeLength = 8
        } else {
            return nil
        }
        var end = schemeLength
        while end < target.count, target[end] != HTTPSyntax.slash, target[end] != HTTPSyntax.question { end += 1 }
        return end > schemeLength ? end : nil
    }

    /// `HTTP/1.0` or `HTTP/1.1`; another well-formed `HTTP/x.y` is a `505`, anything else a `400`.
    private static func parseVersion(_ v: UnsafeRawBufferPointer) throws(HTTPParseError) -> HTTPVersion {
        let wellFormed = v.count == 8
            && v[0] == 0x48 && v[1] == 0x54 && v[2] == 0x54 && v[3] == 0x50 && v[4] == HTTPSyntax.slash  // "HTTP/"
            && HTTPSyntax.isDigit(v[5]) && v[6] == 0x2E && HTTPSyntax.isDigit(v[7])
        guard wellFormed else {
            throw HTTPParseError(.badRequest, "malformed HTTP version")
        }
        switch (v[5], v[7]) {
        case (0x31, 0x31): return .http11
        case (0x31, 0x30): return .http10
        default:
            throw HTTPParseError(.versionNotSupported, "HTTP version \(HTTPSyntax.string(v)) is not supported")
        }
    }
}
