/// One validated `name: value` field line (RFC 9110 §5, RFC 9112 §5), as ranges into the
/// line it was parsed from. Used for header fields and chunked trailer fields alike.
///
/// Refused with `400`: obs-fold (a line starting with SP/HTAB), a missing colon, an empty
/// name, a name byte that is not a `tchar` (including whitespace before the colon), and a
/// value holding NUL, CR, LF, DEL or another control character than HTAB.
struct HTTPFieldLine {
    /// The name, exactly as sent.
    var name: Range<Int>
    /// The value without surrounding OWS.
    var value: Range<Int>

    /// Parses `line`, the field line without its line end.
    init(parsing line: UnsafeRawBufferPointer) throws(HTTPParseError) {
        typealias S = HTTPSyntax
        if let first = line.first, S.isWhitespace(first) {
            throw HTTPParseError(.badRequest, "obsolete line folding in header field")
        }
        var colon = 0
        while colon < line.count, line[colon] != S.colon {
            let c = line[colon]
            guard S.isTokenChar(c) else {
                throw HTTPParseError(.badRequest, S.isWhitespace(c)
                    ? "whitespace in header field name"
                    : "invalid character in header field name")
            }
            colon += 1
        }
        guard colon < line.count else {
            throw HTTPParseError(.badRequest, "header field without colon")
        }
        guard colon > 0 else {
            throw HTTPParseError(.badRequest, "empty header field name")
        }
        var start = colon + 1, end = line.count
        while start < end, S.isWhitespace(line[start]) { start += 1 }
        while end > start, S.isWhitespace(line[end - 1]) { end -= 1 }
        var i = start
        while i < end {
            // A word with no byte below SP and no DEL is valid as a whole; any other (HTAB
            // is allowed) is looked at byte by byte.
            if i + 8 <= end {
                let word = S.word(line, at: i)
                if !S.hasByte(in: word, below: S.space) && !S.hasByte(in: word, equalTo: 0x7F) {
                    i += 8
                    continue
                }
            }
            for j in i..<min(i + 8, end) where !S.isFieldValueByte(line[j]) {
                throw HTTPParseError(.badRequest, "invalid character in header field value")
            }
            i += 8
        }
        name = 0..<colon
        value = start..<end
    }
}

/// What a request's header fields say about its framing and the connection, gathered as
/// each field line is parsed so nothing is searched again at the end of the head.
struct HTTPHeadFacts {
    /// The agreed value of every `Content-Length` (repeats must be identical).
    var contentLength: Int?
    /// `Transfer-Encoding: chunked` was sent (the only coding accepted).
    var chunked = false
    /// `Connection` carried the token `close`.
    var connectionClose = false
    /// `Connection` carried the token `keep-alive`.
    var connectionKeepAlive = false
    /// `Expect: 100-continue` was sent.
    var expectsContinue = false
    /// A `Host` field line was sent (RFC 9112 §3.2: exactly one in every HTTP/1.1 request).
    var host = false

    /// Records the field `name: value` if it is one that matters; throws on framing fields
    /// the server can't trust.
    mutating func note(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) throws(HTTPParseError) {
        typealias S = HTTPSyntax
        switch name.count {
        case 14 where S.equalsIgnoringCase(name, "content-length"):
            try noteContentLength(value)
        case 17 where S.equalsIgnoringCase(name, "transfer-encoding"):
            guard !chunked else {
                throw HTTPParseError(.badRequest, "repeated Transfer-Encoding")
            }
            guard S.equalsIgnoringCase(value, "chunked") else {
                throw HTTPParseError(.badRequest, "unsupported Transfer-Encoding (only chunked is accepted)")
            }
            chunked = true
        case 10 where S.equalsIgnoringCase(name, "connection"):
            for token in HTTPListElements(value) {
                if S.equalsIgnoringCase(token, "close") { connectionClose = true }
                if S.equalsIgnoringCase(token, "keep-alive") { connectionKeepAlive = true }
            }
        case 4 where S.equalsIgnoringCase(name, "host"):
            guard !host else { throw HTTPParseError(.badRequest, "more than one Host header field") }
            guard value.allSatisfy(Self.isHostByte) else { throw HTTPParseError(.badRequest, "invalid Host header field") }
            host = true
        case 6 where S.equalsIgnoringCase(name, "expect"):
            if S.equalsIgnoringCase(value, "100-continue") { expectsContinue = true }
        default:
            break
        }
    }

    /// A byte of `uri-host [":" port]` (RFC 3986: unreserved, pct-encoded, sub-delims, `:`
    /// and the brackets of an IP literal). Refused so: a space (two values a proxy merged
    /// with `, `), `/`, `@` (userinfo), `?`, `#`, and everything outside ASCII.
    /// A bit per byte (`"-._~%!$&'()*+,;=:[]"`.utf8.contains(c) cost about 35 instructions
    /// a byte of the value, issue 27).
    @inline(__always)
    private static func isHostByte(_ c: UInt8) -> Bool {
        HTTPSyntax.isByte(c, in: (below64: 0x2FFF_7FF2_0000_0000,  // ! $ % & ' ( ) * + , - . 0-9 : ; =
                                  from64: 0x47FF_FFFE_AFFF_FFFE))  // A-Z [ ] _ a-z ~
    }

    /// `Content-Length` is `1*DIGIT`; a list or a repeat must agree on one value.
    private mutating func noteContentLength(_ value: UnsafeRawBufferPointer) throws(HTTPParseError) {
        for element in HTTPListElements(value) {
            guard !element.isEmpty else {
                throw HTTPParseError(.badRequest, "empty Content-Length")
            }
            var n = 0
            for c in element {
                guard HTTPSyntax.isDigit(c) else {
                    throw HTTPParseError(.badRequest, "Content-Length is not a decimal number")
                }
                let (times10, o1) = n.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(Int(c &- 0x30))
                guard !o1, !o2 else {
                    throw HTTPParseError(.badRequest, "Content-Length is too large to represent")
                }
                n = sum
            }
            if let earlier = contentLength, earlier != n {
                throw HTTPParseError(.badRequest, "conflicting Content-Length values")
            }
            contentLength = n
        }
    }
}
