/// Parses one request head (request line + header fields) from bytes as they arrive.
///
/// Each line is validated the moment its LF arrives and then handed back as consumed, so the
/// parser keeps only what completed lines produced (the request line's fields, the headers)
/// plus how far into the current line it has looked: bytes arriving one at a time cost linear
/// time, and errors surface in byte order however the input was split.
///
/// Bounds, checked on every byte: the request target against `maxURIBytes` (`414`) while the
/// request line arrives, then the whole head against `maxHeaderBytes` (`431`). Bare LF ends a
/// line like CRLF; a CR followed by anything but LF is a `400`.
struct HTTPHeadParser {
    private let limits: HTTPLimits
    /// Bytes of the current, incomplete line already examined (from the first unconsumed byte).
    private var scanned = 0
    /// Bytes of the completed lines of this head, line ends included.
    private var headBytes = 0
    /// Nil until the request line is complete.
    private var requestLine: HTTPRequestLine?
    /// `requestLine == nil`, kept apart so the per-byte loop does not copy the optional.
    private var inRequestLine = true
    /// Spaces seen so far in the incomplete request line (to know which part a byte is in).
    private var requestLineSpaces = 0
    /// Bytes of the request target seen so far in the incomplete request line.
    private var targetBytes = 0
    /// The header fields so far, as bytes (no `String` per field).
    private var fields = HTTPFieldBlock()
    private var facts = HTTPHeadFacts()

    init(limits: HTTPLimits) { self.limits = limits }

    /// Whether any byte of this head has arrived (leading empty lines aside).
    var hasStarted: Bool { scanned > 0 || !inRequestLine }

    /// Examines `bytes` (everything not yet consumed, starting where the last call's
    /// `consumed` ended). Returns how many leading bytes are consumed (completed lines) and
    /// the head once its empty line arrived; the parser is then reset for the next request.
    mutating func parse(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> (consumed: Int, head: HTTPRequestHead?) {
        var lineStart = 0
        var i = scanned
        if inRequestLine && (i > 0 || !takeWholeRequestLine(bytes, lineStart: &lineStart, i: &i)) {
            try scanRequestLine(bytes, lineStart: &lineStart, i: &i)
        }
        if !inRequestLine, let head = try scanFieldLines(bytes, lineStart: &lineStart, i: &i) {
            self = HTTPHeadParser(limits: limits)
            return (lineStart, head)
        }
        scanned = i - lineStart
        return (lineStart, nil)
    }

    /// The usual case, a whole valid request line in the bytes: it is found and parsed
    /// without the byte-by-byte checks of `scanRequestLine`, which could not have thrown
    /// for it (its method is a token, its target within `maxURIBytes`, its LF within
    /// `maxHeaderBytes`, its only CR the one before the LF). Returns false, changing
    /// nothing, for anything else (a line not complete yet, a leading empty line, any
    /// refusal): `scanRequestLine` then takes it from the start, and refuses in byte
    /// order as before. Only for a line none of whose bytes were scanned yet.
    private mutating func takeWholeRequestLine(_ bytes: UnsafeRawBufferPointer, lineStart: inout Int,
                                               i: inout Int) -> Bool {
        typealias S = HTTPSyntax
        let limitEnd = min(bytes.count, limits.maxHeaderBytes)
        let end = S.firstByte(below: S.cr + 1, in: bytes, from: 0, to: limitEnd)
        guard end > 0, end < limitEnd else { return false }
        let lineEnd: Int  // the index past the LF
        switch bytes[end] {
        case S.lf: lineEnd = end + 1
        case S.cr where end + 1 < limitEnd && bytes[end + 1] == S.lf: lineEnd = end + 2
        default: return false
        }
        let line: HTTPRequestLine
        do {
            line = try HTTPRequestLine(parsing: UnsafeRawBufferPointer(rebasing: bytes[0..<end]))
        } catch {
            return false
        }
        guard line.target.utf8.count <= limits.maxURIBytes else { return false }
        requestLine = consume line
        inRequestLine = false
        headBytes = lineEnd
        lineStart = lineEnd
        i = lineEnd
        return true
    }

    /// Scans from `i` until the request line is complete (and parsed) or the bytes run out.
    /// Each byte is checked in order: method and target (`400`, `414`), the head limit
    /// (`431`), then, for a CR, that LF follows (`400`).
    private mutating func scanRequestLine(_ bytes: UnsafeRawBufferPointer, lineStart: inout Int, i: inout Int) throws(HTTPParseError) {
        typealias S = HTTPSyntax
        var limitEnd = lineStart + limits.maxHeaderBytes  // the first index past the head limit
        while i < bytes.count {
            let byte = bytes[i]
            try trackRequestLine(byte)
            guard i < limitEnd else {
                throw HTTPParseError(.headersTooLarge, "request head exceeds \(limits.maxHeaderBytes) bytes")
            }
            if byte == S.cr {
                guard i + 1 < bytes.count else { break }  // look again once the next byte arrives
                guard bytes[i + 1] == S.lf else {
                    throw HTTPParseError(.badRequest, "bare CR in request line")
                }
            }
            i += 1
            guard byte == S.lf else { continue }
            let end = i - 1 > lineStart && bytes[i - 2] == S.cr ? i - 2 : i - 1
            let line = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<end])
            let lineLength = i - lineStart
            lineStart = i
            guard !line.isEmpty else {
                // RFC 9112 §2.2: empty lines before the request line are ignored.
                limitEnd = lineStart + limits.maxHeaderBytes
                continue
            }
            requestLine = try HTTPRequestLine(parsing: line)
            inRequestLine = false
            headBytes = lineLength
            return
        }
    }

    /// Scans field lines from `i` until the empty line (returns the head) or the bytes run out.
    /// Only LF and CR need a look per byte; the same order of checks as the request line
    /// holds (a CR followed by anything but LF is a `400` even at the limit's edge).
    private mutating func scanFieldLines(_ bytes: UnsafeRawBufferPointer, lineStart: inout Int, i: inout Int) throws(HTTPParseError) -> HTTPRequestHead? {
        typealias S = HTTPSyntax
        // The first index past the head limit. Constant across lines: `lineStart` and
        // `headBytes` grow together.
        let limitEnd = lineStart + limits.maxHeaderBytes - headBytes
        let end = min(bytes.count, limitEnd)
        while i < end {
            // Straight to the next byte at or below CR, eight bytes at a time (nearly all of a
            // head is above it: about 12 instructions a byte one by one, issue 27).
            i = S.firstByte(below: S.cr + 1, in: bytes, from: i, to: end)
            guard i < end else { break }
            let byte = bytes[i]
            if byte == S.cr {
                guard i + 1 < bytes.count else { break }  // look again once the next byte arrives
                guard bytes[i + 1] == S.lf else {
                    throw HTTPParseError(.badRequest, "bare CR in header field")
                }
            } else if byte == S.lf {
                let lineEnd = i > lineStart && bytes[i - 1] == S.cr ? i - 1 : i
                let line = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<lineEnd])
                headBytes += i + 1 - lineStart
                lineStart = i + 1
                guard !line.isEmpty else { return try finish() }
                try addField(line)
            }
            i += 1
        }
        if i == limitEnd && limitEnd < bytes.count {
            throw HTTPParseError(.headersTooLarge, "request head exceeds \(limits.maxHeaderBytes) bytes")
        }
        return nil
    }

    private mutating func addField(_ line: UnsafeRawBufferPointer) throws(HTTPParseError) {
        let field = try HTTPFieldLine(parsing: line)
        let name = UnsafeRawBufferPointer(rebasing: line[field.name])
        let value = UnsafeRawBufferPointer(rebasing: line[field.value])
        try facts.note(name: name, value: value)
        fields.append(name: name, value: value)
    }

    /// Early checks on a byte of the incomplete request line: method bytes must be tchars
    /// (so a TLS handshake or other non-HTTP talk is refused at once) and the target must
    /// stay within `maxURIBytes`. The complete line is validated again as a whole.
    @inline(__always)
    private mutating func trackRequestLine(_ byte: UInt8) throws(HTTPParseError) {
        typealias S = HTTPSyntax
        switch byte {
        case S.space:
            requestLineSpaces += 1
        case S.cr, S.lf:
            break
        default:
            if requestLineSpaces == 0 {
                guard S.isTokenChar(byte) else {
                    throw HTTPParseError(.badRequest, "malformed request line: invalid method")
                }
            } else if requestLineSpaces == 1 {
                targetBytes += 1
                guard targetBytes <= limits.maxURIBytes else {
                    throw HTTPParseError(.uriTooLong, "request target exceeds \(limits.maxURIBytes) bytes")
                }
            }
        }
    }

    /// The head, once its empty line arrived: decides framing and connection reuse. Takes
    /// the request line and the fields out (moved into the head, not copied: the parser
    /// is reset after it, or dead after a throw).
    private mutating func finish() throws(HTTPParseError) -> HTTPRequestHead {
        guard let line = requestLine.take() else {
            preconditionFailure("a head is finished only after its request line")
        }
        guard facts.host || line.version == .http10 else {
            throw HTTPParseError(.badRequest, "no Host header field in an HTTP/1.1 request")
        }
        let framing: HTTPBodyFraming
        if facts.chunked {
            guard line.version == .http11 else {
                throw HTTPParseError(.badRequest, "Transfer-Encoding in an HTTP/1.0 request")
            }
            guard facts.contentLength == nil else {
                throw HTTPParseError(.badRequest, "both Content-Length and Transfer-Encoding")
            }
            framing = .chunked
        } else if let length = facts.contentLength {
            guard length <= limits.maxBodyBytes else {
                throw HTTPParseError(.contentTooLarge, "body of \(length) bytes exceeds \(limits.maxBodyBytes) bytes")
            }
            framing = .contentLength(length)
        } else {
            framing = .none
        }
        let keepAlive = switch line.version {
        case .http11: !facts.connectionClose
        case .http10: facts.connectionKeepAlive && !facts.connectionClose
        }
        var taken = HTTPFieldBlock()
        swap(&taken, &fields)
        return HTTPRequestHead(line: line, headers: HTTPHeaders(received: taken), bodyFraming: framing,
                               keepAlive: keepAlive, expectsContinue: facts.expectsContinue)
    }
}
