/// Decodes a `Transfer-Encoding: chunked` body (RFC 9112 §7.1) from bytes as they arrive,
/// appending chunk data to the request's body.
///
/// Keeps no copy of framing bytes: size lines are read a byte at a time into a small state,
/// and only an incomplete trailer line is left unconsumed for the next call. Bounds: the
/// decoded body against `maxBodyBytes` (`413`, as soon as a chunk size would pass it), each
/// size line (size plus extensions) against `maxChunkLineBytes` and the trailer section
/// against `maxHeaderBytes` (`431`). Chunk extensions are accepted and ignored; trailer fields
/// are validated like header fields and ignored. Bare LF ends a line like CRLF.
struct ChunkedBodyDecoder {
    /// The longest chunk-size line (size, extensions, line end) accepted.
    static let maxChunkLineBytes = 4096
    /// Hex digits beyond this many are refused, so a size can never overflow.
    static let maxSizeDigits = 15

    private enum State {
        /// Reading the hex digits of a chunk size.
        case size(value: Int, digits: Int)
        /// After the size: BWS, then an extension or the line end.
        case afterSize(value: Int)
        /// Inside chunk extensions, until the line end.
        case extensions(value: Int)
        /// A CR ended the size line; LF must follow.
        case sizeLineCR(value: Int)
        /// Copying chunk data.
        case data(remaining: Int)
        /// Chunk data ended; CRLF (or LF) must follow.
        case dataEnd
        /// A CR followed chunk data; LF must follow.
        case dataEndCR
        /// Reading trailer field lines; `scanned` bytes of the current line were examined.
        case trailers(scanned: Int)
        case done
    }

    private let limits: HTTPLimits
    private var state = State.size(value: 0, digits: 0)
    /// Sum of the chunk sizes announced so far: the decoded body's eventual length.
    private var announcedBytes = 0
    /// Bytes of the current chunk-size line so far.
    private var lineBytes = 0
    /// Bytes of the trailer section so far (completed lines).
    private var trailerBytes = 0

    init(limits: HTTPLimits) { self.limits = limits }

    /// Decodes from `bytes` (everything not yet consumed), appending data to `body`. Returns
    /// how many leading bytes were consumed and whether the body (with its trailers) is complete.
    mutating func decode(_ bytes: UnsafeRawBufferPointer, into body: inout [UInt8]) throws(HTTPParseError) -> (consumed: Int, done: Bool) {
        typealias S = HTTPSyntax
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            switch state {
            case .size(let value, let digits):
                try countLineByte()
                if let digit = S.hexValue(byte) {
                    guard digits < Self.maxSizeDigits else {
                        throw HTTPParseError(.badRequest, "chunk size has more than \(Self.maxSizeDigits) digits")
                    }
                    state = .size(value: value << 4 | Int(digit), digits: digits + 1)
                } else {
                    guard digits > 0 else {
                        throw HTTPParseError(.badRequest, "missing or invalid chunk size")
                    }
                    try afterSize(value: value, byte: byte)
                }
            case .afterSize(let value):
                try countLineByte()
                try afterSize(value: value, byte: byte)
            case .extensions(let value):
                try countLineByte()
                switch byte {
                case S.cr: state = .sizeLineCR(value: value)
                case S.lf: try endOfSizeLine(value: value)
                default:
                    guard S.isFieldValueByte(byte) else {
                        throw HTTPParseError(.badRequest, "invalid character in chunk extension")
                    }
                }
            case .sizeLineCR(let value):
                guard byte == S.lf else {
                    throw HTTPParseError(.badRequest, "bare CR in chunk size line")
                }
                try endOfSizeLine(value: value)
            case .data(let remaining):
                let n = min(remaining, bytes.count - i)
                body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + n)]))
                state = n == remaining ? .dataEnd : .data(remaining: remaining - n)
                i += n
                continue
            case .dataEnd:
                switch byte {
                case S.cr: state = .dataEndCR
                case S.lf: state = .size(value: 0, digits: 0)
                default: throw HTTPParseError(.badRequest, "chunk data not followed by CRLF")
                }
            case .dataEndCR:
                guard byte == S.lf else {
                    throw HTTPParseError(.badRequest, "chunk data not followed by CRLF")
                }
                state = .size(value: 0, digits: 0)
            case .trailers, .done:
                return try finish(bytes, from: i)
            }
            i += 1
        }
        return try finish(bytes, from: i)
    }

    /// Ends a `decode` call at `i`: reads trailer lines if the last chunk was seen.
    private mutating func finish(_ bytes: UnsafeRawBufferPointer, from i: Int) throws(HTTPParseError) -> (consumed: Int, done: Bool) {
        switch state {
        case .trailers(let scanned): return try readTrailers(bytes, from: i, scanned: scanned)
        case .done: return (i, true)
        default: return (i, false)
        }
    }

    private mutating func countLineByte() throws(HTTPParseError) {
        lineBytes += 1
        guard lineBytes <= Self.maxChunkLineBytes else {
            throw HTTPParseError(.badRequest, "chunk size line exceeds \(Self.maxChunkLineBytes) bytes")
        }
    }

    /// A byte after the size's digits: BWS, `;` starting an extension, or the line end.
    private mutating func afterSize(value: Int, byte: UInt8) throws(HTTPParseError) {
        typealias S = HTTPSyntax
        switch byte {
        case S.space, S.tab: state = .afterSize(value: value)
        case S.semicolon: state = .extensions(value: value)
        case S.cr: state = .sizeLineCR(value: value)
        case S.lf: try endOfSizeLine(value: value)
        default: throw HTTPParseError(.badRequest, "invalid chunk size")
        }
    }

    /// The size line ended: the last chunk starts the trailers, any other chunk its data.
    private mutating func endOfSizeLine(value: Int) throws(HTTPParseError) {
        lineBytes = 0
        guard value > 0 else {
            state = .trailers(scanned: 0)
            return
        }
        announcedBytes += value  // both at most 15 hex digits: no overflow
        guard announcedBytes <= limits.maxBodyBytes else {
            throw HTTPParseError(.contentTooLarge, "chunked body exceeds \(limits.maxBodyBytes) bytes")
        }
        state = .data(remaining: value)
    }

    /// Reads complete trailer lines from `start`; an incomplete line is left unconsumed.
    private mutating func readTrailers(_ bytes: UnsafeRawBufferPointer, from start: Int, scanned: Int) throws(HTTPParseError) -> (consumed: Int, done: Bool) {
        typealias S = HTTPSyntax
        var lineStart = start
        var i = start + scanned
        while i < bytes.count {
            guard trailerBytes + (i + 1 - lineStart) <= limits.maxHeaderBytes else {
                throw HTTPParseError(.headersTooLarge, "chunked trailers exceed \(limits.maxHeaderBytes) bytes")
            }
            if bytes[i] == S.lf {
                let end = i > lineStart && bytes[i - 1] == S.cr ? i - 1 : i
                let line = UnsafeRawBufferPointer(rebasing: bytes[lineStart..<end])
                trailerBytes += i + 1 - lineStart
                lineStart = i + 1
                if line.isEmpty {
                    state = .done
                    return (lineStart, true)
                }
                // A bare CR inside the line is refused here: CR is neither a tchar nor a value byte.
                _ = try HTTPFieldLine(parsing: line)
            }
            i += 1
        }
        state = .trailers(scanned: i - lineStart)
        return (lineStart, false)
    }
}
