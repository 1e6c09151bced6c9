import Testing
@testable import HTTPCore

struct HTTPResponseEncodingTests {
    /// A response head serializes as status line, fields in order, and an empty line.
    @Test func responseHeadBytes() {
        let head = HTTPResponseHead(status: .ok, headers: ["Content-Type": "text/event-stream", "Cache-Control": "no-cache"])
        let text = String(decoding: head.bytes(version: .http11), as: UTF8.self)
        #expect(text == "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n\r\n")
    }

    /// A head without fields is the status line and an empty line, in the version asked for.
    @Test func responseHeadWithoutFields() {
        let head = HTTPResponseHead(status: .versionNotSupported)
        #expect(head.bytes(version: .http10) == bytes("HTTP/1.0 505 HTTP Version Not Supported\r\n\r\n"))
    }

    /// Chunk headers are the size in lowercase hex followed by CRLF.
    @Test(arguments: [(1, "1"), (10, "a"), (26, "1a"), (255, "ff"), (4096, "1000"), (65535, "ffff"), (0, "0")])
    func chunkHeaderHex(_ size: Int, _ hex: String) {
        #expect(ChunkedEncoding.chunkHeader(size: size) == bytes(hex + "\r\n"))
    }

    /// The chunk end and last chunk are CRLF and `0` CRLF CRLF.
    @Test func chunkFraming() {
        #expect(ChunkedEncoding.chunkEnd == bytes("\r\n"))
        #expect(ChunkedEncoding.lastChunk == bytes("0\r\n\r\n"))
    }

    /// Encoded chunks round-trip through the request parser's chunked decoder.
    @Test func chunkedEncodingRoundTrips() {
        let payload = [UInt8](repeating: 0x41, count: 300)
        let framed = bytes("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n")
            + ChunkedEncoding.chunkHeader(size: payload.count) + payload + ChunkedEncoding.chunkEnd
            + ChunkedEncoding.lastChunk
        #expect(feed([framed]).requests.first?.body == payload)
    }
}

/// The size line the event loop formats on the stack is the one `chunkHeader` builds.
struct ChunkHeaderInPlaceTests {
    @Test(arguments: [0, 1, 9, 10, 15, 16, 255, 256, 4095, 65_536, 1 << 40, Int.max])
    func inPlaceHeaderMatchesTheArrayOne(_ size: Int) {
        let written = withUnsafeTemporaryAllocation(byteCount: 24, alignment: 1) { buffer in
            let length = ChunkedEncoding.writeChunkHeader(size: size, into: buffer)
            return Array(buffer[0..<length])
        }
        #expect(written == ChunkedEncoding.chunkHeader(size: size))
    }
}
