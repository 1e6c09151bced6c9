extension HTTPResponseHead {
    /// The status line and header block as sent on the wire:
    /// `HTTP/1.1 200 OK\r\nName: value\r\n…\r\n\r\n`, fields in order, names as given.
    ///
    /// A CR or LF in a field name or value, or in the reason phrase, would let a value forge
    /// headers or a body; it is a programmer error and traps.
    public func bytes(version: HTTPVersion) -> [UInt8] {
        var encoder = HTTPResponseHeadEncoder(status: status, version: version)
        encoder.appendFields(of: headers)
        encoder.endHead()
        return encoder.bytes
    }
}

/// The framing bytes of a `Transfer-Encoding: chunked` response body (RFC 9112 §7.1):
/// each chunk is `chunkHeader(size:)`, the data, `chunkEnd`; the body ends with `lastChunk`.
public enum ChunkedEncoding {
    /// `size` in lowercase hex followed by CRLF, e.g. `1a\r\n` for 26. A size of 0 starts the
    /// last chunk, so data-carrying chunks must not be empty; end a body with `lastChunk`.
    public static func chunkHeader(size: Int) -> [UInt8] {
        precondition(size >= 0, "a chunk size is never negative")
        var out: [UInt8] = []
        out.reserveCapacity(18)
        var shift = (Int.bitWidth - size.leadingZeroBitCount - 1) / 4 * 4
        while shift >= 0 {
            let digit = UInt8((size >> shift) & 0xF)
            out.append(digit < 10 ? 0x30 + digit : 0x61 + digit - 10)
            shift -= 4
        }
        out.append(HTTPSyntax.cr)
        out.append(HTTPSyntax.lf)
        return out
    }

    /// Writes `chunkHeader(size:)` into `buffer` (at least 18 bytes) without
    /// allocating; returns its length.
    static func writeChunkHeader(size: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        precondition(size >= 0, "a chunk size is never negative")
        var length = 0
        var shift = (Int.bitWidth - size.leadingZeroBitCount - 1) / 4 * 4
        while shift >= 0 {
            let digit = UInt8((size >> shift) & 0xF)
            buffer[length] = digit < 10 ? 0x30 + digit : 0x61 + digit - 10
            length += 1
            shift -= 4
        }
        buffer[length] = HTTPSyntax.cr
        buffer[length + 1] = HTTPSyntax.lf
        return length + 2
    }

    /// The CRLF that follows each chunk's data.
    public static let chunkEnd: [UInt8] = [HTTPSyntax.cr, HTTPSyntax.lf]

    /// The last chunk and the empty trailer section: `0\r\n\r\n`.
    public static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
}
