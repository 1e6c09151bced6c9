/// Writes a response head straight into one byte buffer: the status line from a cached
/// prefix, the handler's fields, then the fields the server owns from byte templates. The
/// caller may append a small body after `endHead()` so head and body leave in one write.
///
/// A CR or LF in a field name or value, or in a reason phrase, would let a value forge
/// headers or a body; it is a programmer error and traps.
struct HTTPResponseHeadEncoder {
    /// The head so far (and, after `endHead()`, whatever the caller appended).
    private(set) var bytes: [UInt8] = []

    /// Starts a head with the status line of `status` in `version`, with room for
    /// `capacity` bytes in all (head and any body appended after it).
    init(status: HTTPStatus, version: HTTPVersion = .http11, capacity: Int = 256) {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(capacity)
        self.init(status: status, version: version, after: bytes)
    }

    /// Starts a head after the bytes of `buffer` (earlier replies that leave in the same
    /// write), in the buffer's own storage when it is not shared.
    init(status: HTTPStatus, version: HTTPVersion = .http11, after buffer: [UInt8]) {
        bytes = buffer
        if version == .http11, let line = HTTPStatusLines.line(for: status) {
            bytes.append(contentsOf: line)
        } else {
            HTTPStatusLines.append(status, version: version, to: &bytes)
        }
    }

    /// Appends `name: value`.
    mutating func appendField(name: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        Self.check(name)
        Self.check(value)
        // The line is put together on the stack and appended at once (an append costs
        // about 100 instructions whatever it appends; this was two and four bytes).
        withUnsafeTemporaryAllocation(byteCount: name.count + value.count + 4, alignment: 1) { line in
            line.copyMemory(from: name)
            line[name.count] = HTTPSyntax.colon
            line[name.count + 1] = HTTPSyntax.space
            UnsafeMutableRawBufferPointer(rebasing: line[(name.count + 2)...]).copyMemory(from: value)
            line[line.count - 2] = HTTPSyntax.cr
            line[line.count - 1] = HTTPSyntax.lf
            bytes.append(contentsOf: UnsafeRawBufferPointer(line))
        }
    }

    /// Appends every field of `headers` in order, except those named in `skipping`
    /// (the fields the server is about to set itself).
    mutating func appendFields(of headers: HTTPHeaders, skipping: HTTPServerFields = []) {
        headers.forEachField { name, value in
            if skipping.isEmpty || !skipping.names(name) {
                appendField(name: name, value: value)
            }
            return true
        }
    }

    /// Appends a whole field line from a template (it ends with CRLF and was checked when made).
    mutating func appendFieldLine(_ line: [UInt8]) {
        bytes.append(contentsOf: line)
    }

    /// Appends `Content-Length: <n>`, the digits written in place.
    mutating func appendContentLength(_ n: Int) {
        precondition(n >= 0, "a content length is never negative")
        bytes.append(contentsOf: Self.contentLengthPrefix)
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var i = buffer.count, rest = n
            repeat {
                i -= 1
                buffer[i] = 0x30 + UInt8(rest % 10)
                rest /= 10
            } while rest > 0
            bytes.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[i...]))
        }
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
    }

    /// Ends the head with its empty line.
    mutating func endHead() {
        bytes.append(HTTPSyntax.cr)
        bytes.append(HTTPSyntax.lf)
    }

    /// Appends body bytes after the head.
    mutating func appendBody(_ body: [UInt8]) {
        bytes.append(contentsOf: body)
    }

    /// The bytes, the encoder given up (so the caller's buffer is not shared with it).
    consuming func finish() -> [UInt8] {
        bytes
    }

    private static let contentLengthPrefix: [UInt8] = Array("Content-Length: ".utf8)

    static func appendChecked(_ text: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        check(text)
        out.append(contentsOf: text)
    }

    /// Traps on a CR or LF in `text` (a forged field or body).
    @inline(__always)
    static func check(_ text: UnsafeRawBufferPointer) {
        precondition(firstLineBreak(in: text) == nil,
                     "CR or LF in a response head: \(HTTPSyntax.string(text).debugDescription)")
    }

    /// The index of the first CR or LF of `text`, or nil: eight bytes at a time up to each
    /// byte at or below CR, which is then looked at (byte by byte this was about 300
    /// instructions a field of every reply, issue 27).
    @inline(__always)
    static func firstLineBreak(in text: UnsafeRawBufferPointer) -> Int? {
        var i = HTTPSyntax.firstByte(below: HTTPSyntax.cr + 1, in: text, from: 0, to: text.count)
        while i < text.count {
            if text[i] == HTTPSyntax.cr || text[i] == HTTPSyntax.lf { return i }
            i = HTTPSyntax.firstByte(below: HTTPSyntax.cr + 1, in: text, from: i + 1, to: text.count)
        }
        return nil
    }
}

/// The fields the server sets on a response itself, replacing any a handler gave.
struct HTTPServerFields: OptionSet {
    let rawValue: UInt8

    static let date = HTTPServerFields(rawValue: 1 << 0)
    static let contentLength = HTTPServerFields(rawValue: 1 << 1)
    static let transferEncoding = HTTPServerFields(rawValue: 1 << 2)
    static let connection = HTTPServerFields(rawValue: 1 << 3)

    /// Whether `name` (any case) is one of these fields.
    func names(_ name: UnsafeRawBufferPointer) -> Bool {
        typealias S = HTTPSyntax
        switch name.count {
        case 4: return contains(.date) && S.equalsIgnoringCase(name, "date")
        case 14: return contains(.contentLength) && S.equalsIgnoringCase(name, "content-length")
        case 17: return contains(.transferEncoding) && S.equalsIgnoringCase(name, "transfer-encoding")
        case 10: return contains(.connection) && S.equalsIgnoringCase(name, "connection")
        default: return false
        }
    }

    /// `Connection: close\r\n`.
    static let closeLine: [UInt8] = Array("Connection: close\r\n".utf8)
    /// `Connection: keep-alive\r\n`.
    static let keepAliveLine: [UInt8] = Array("Connection: keep-alive\r\n".utf8)
    /// `Transfer-Encoding: chunked\r\n`.
    static let chunkedLine: [UInt8] = Array("Transfer-Encoding: chunked\r\n".utf8)
}
