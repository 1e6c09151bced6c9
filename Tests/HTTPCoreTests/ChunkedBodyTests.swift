import Testing
@testable import HTTPCore

/// Chunked request bodies, and results that must not depend on how the input was split.
struct ChunkedBodyTests {
    static let chunkedRequest = bytes(
        "POST /events/chat?event=msg HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n"
            + "5;name=value;flag\r\nhello\r\n"
            + "1A ; ext=\"quoted; still\"\r\n" + String(repeating: "z", count: 26) + "\r\n"
            + "0\r\nX-Checksum: abc\r\nX-Other:1\r\n\r\n"
            + "GET /next HTTP/1.1\r\nHost: t\r\n\r\n")

    /// A chunked body is decoded; extensions and trailers are accepted and ignored.
    @Test func decodesChunkedBodyWithExtensionsAndTrailers() throws {
        let outcome = feed([Self.chunkedRequest])
        #expect(outcome.error == nil)
        #expect(outcome.requests.count == 2)
        let request = try #require(outcome.requests.first)
        #expect(request.head.bodyFraming == .chunked)
        #expect(request.body == bytes("hello" + String(repeating: "z", count: 26)))
        #expect(request.head.headers["x-checksum"] == nil)
        #expect(outcome.requests.last?.head.rawPath == "/next")
    }

    /// Split in two at every byte boundary, the chunked request parses to the identical requests as unsplit.
    @Test func everySplitGivesTheSameRequests() {
        let whole = feed([Self.chunkedRequest]).requests
        #expect(whole.count == 2)
        for cut in 0...Self.chunkedRequest.count {
            let outcome = feed(split(Self.chunkedRequest, at: cut))
            #expect(outcome.error == nil, "cut at \(cut)")
            #expect(outcome.requests == whole, "cut at \(cut)")
        }
    }

    /// Fed one byte at a time, the chunked request yields `.head` once, then the identical requests.
    @Test func bytewiseGivesHeadThenTheSameRequests() throws {
        let whole = feed([Self.chunkedRequest]).requests
        let outcome = feed(bytewise(Self.chunkedRequest))
        #expect(outcome.error == nil)
        #expect(outcome.requests == whole)
        #expect(outcome.events.count == 3)
        guard case .head(let head)? = outcome.events.first else { Issue.record("expected .head first"); return }
        #expect(head == whole.first?.head)
        #expect(head.expectsContinue)
    }

    /// Refusals split at every byte boundary (and bytewise) are still refused with the same status.
    @Test(arguments: [
        ("POST / HTTP/1.1\r\nHost: a\r\nX-Bad : 1\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: a\rX\r\n\r\n", 400),
        ("GET / HTTP/2.0\r\n\r\n", 505),
        ("GET /" + String(repeating: "u", count: 80) + " HTTP/1.1\r\nHost: t\r\n\r\n", 414),
        ("GET / HTTP/1.1\r\nHost: t\r\n" + String(repeating: "X-F: 0123456789\r\n", count: 12) + "\r\n", 431),
        ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 200\r\n\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n", 400),
        ("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n40\r\n" + String(repeating: "b", count: 64) + "\r\n41\r\n", 413),
        ("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer: x\r\n\r\n", 400),
    ])
    func everySplitRefusedTheSame(_ raw: String, _ status: Int) {
        let data = bytes(raw)
        let tight = limits(header: 200, uri: 64, body: 100)
        #expect(feed([data], limits: tight).error?.status.code == status)
        #expect(feed(bytewise(data), limits: tight).error?.status.code == status)
        for cut in 0...data.count {
            #expect(feed(split(data, at: cut), limits: tight).error?.status.code == status, "cut at \(cut)")
        }
    }

    /// A chunk size line without digits is a 400.
    @Test func emptyChunkSize() { #expect(chunkedRefusal("\r\nabc\r\n0\r\n\r\n") == 400) }

    /// A chunk size with a non-hex character is a 400.
    @Test func nonHexChunkSize() { #expect(chunkedRefusal("zz\r\nabc\r\n0\r\n\r\n") == 400) }

    /// A signed chunk size is a 400.
    @Test func signedChunkSize() { #expect(chunkedRefusal("+3\r\nabc\r\n0\r\n\r\n") == 400) }

    /// A chunk size with more than 15 hex digits is a 400 (no overflow).
    @Test func overlongChunkSize() {
        #expect(chunkedRefusal("0000000000000003\r\nabc\r\n0\r\n\r\n") == 400)
        #expect(chunkedRefusal("ffffffffffffffffff\r\n") == 400)
    }

    /// Junk after the chunk size that is not an extension is a 400.
    @Test func junkAfterChunkSize() { #expect(chunkedRefusal("3 x\r\nabc\r\n0\r\n\r\n") == 400) }

    /// Chunk data not followed by CRLF is a 400.
    @Test func missingCRLFAfterChunkData() {
        #expect(chunkedRefusal("3\r\nabcd\r\n0\r\n\r\n") == 400)
        #expect(chunkedRefusal("3\r\nabc\rx0\r\n\r\n") == 400)
    }

    /// A bare CR ending a chunk size line is a 400.
    @Test func bareCRInChunkSizeLine() { #expect(chunkedRefusal("3\rabc\r\n0\r\n\r\n") == 400) }

    /// A control character in a chunk extension is a 400.
    @Test func controlInChunkExtension() { #expect(chunkedRefusal("3;a=\u{1}\r\nabc\r\n0\r\n\r\n") == 400) }

    /// An endless chunk extension is a 400 once the size line passes its bound.
    @Test func endlessChunkExtension() {
        #expect(chunkedRefusal("3;" + String(repeating: "e", count: ChunkedBodyDecoder.maxChunkLineBytes)) == 400)
    }

    /// A malformed trailer field is a 400, with the same rules as header fields.
    @Test func malformedTrailer() {
        #expect(chunkedRefusal("0\r\nNo colon\r\n\r\n") == 400)
        #expect(chunkedRefusal("0\r\nX-A: a\u{0}\r\n\r\n") == 400)
        #expect(chunkedRefusal("0\r\n folded\r\n\r\n") == 400)
    }

    /// Trailers larger than maxHeaderBytes are a 431.
    @Test func trailersTooLarge() {
        let trailers = String(repeating: "X-T: 0123456789\r\n", count: 100)
        #expect(chunkedRefusal("0\r\n" + trailers, limits: limits(header: 512)) == 431)
    }

    /// A chunked body growing past maxBodyBytes is a 413 as soon as a chunk size passes the limit.
    @Test func chunkedBodyTooLarge() {
        let first = "40\r\n" + String(repeating: "a", count: 64) + "\r\n"
        #expect(chunkedRefusal(first + "25\r\n", limits: limits(body: 100)) == 413)
        let exact = parse(chunkedHead + first + "24\r\n" + String(repeating: "b", count: 36) + "\r\n0\r\n\r\n", limits: limits(body: 100))
        #expect(exact.error == nil)
        #expect(exact.requests.first?.body.count == 100)
    }

    /// A chunked body with only the last chunk is empty.
    @Test func emptyChunkedBody() {
        let outcome = parse(chunkedHead + "0\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.requests.first?.body == [])
    }

    private let chunkedHead = "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n"

    private func chunkedRefusal(_ body: String, limits: HTTPLimits = HTTPLimits()) -> Int? {
        refusal(chunkedHead + body, limits: limits)
    }
}
