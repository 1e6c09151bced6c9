import Testing
@testable import HTTPCore

/// Body framing the server can't trust (Content-Length, Transfer-Encoding), per API.md.
struct HTTPFramingRefusalTests {
    /// Both Content-Length and Transfer-Encoding are a 400.
    @Test func contentLengthAndTransferEncoding() {
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == 400)
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n") == 400)
    }

    /// Two Content-Length fields with different values are a 400.
    @Test func conflictingContentLengthFields() {
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd") == 400)
    }

    /// A Content-Length list with different values is a 400.
    @Test func conflictingContentLengthList() {
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 3, 4\r\n\r\nabcd") == 400)
    }

    /// A Content-Length that is not a plain decimal number (sign, inner space, hex, empty, list hole, overflow) is a 400.
    @Test(arguments: ["-1", "+1", "1 2", "0x10", "1a", "", "3,", ",3", "1.0", "99999999999999999999999"])
    func malformedContentLength(_ value: String) {
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: \(value)\r\n\r\n") == 400)
    }

    /// A Content-Length over maxBodyBytes is a 413 as soon as the head ends, before any body byte.
    @Test func contentLengthTooLarge() {
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 101\r\n\r\n", limits: limits(body: 100)) == 413)
        #expect(parse("POST / HTTP/1.1\r\nHost: t\r\nContent-Length: 100\r\n\r\n", limits: limits(body: 100)).events.count == 1)
    }

    /// Transfer-Encoding other than exactly `chunked` (stacked, repeated, identity, unknown) is a 400.
    @Test(arguments: ["gzip, chunked", "chunked, chunked", "identity", "gzip", "chunked;q=1", "", "chunked,"])
    func unsupportedTransferEncoding(_ value: String) {
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: \(value)\r\n\r\n0\r\n\r\n") == 400)
    }

    /// Two `Transfer-Encoding: chunked` fields are a 400.
    @Test func repeatedTransferEncodingField() {
        #expect(refusal("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == 400)
    }

    /// Transfer-Encoding in an HTTP/1.0 request is a 400.
    @Test func transferEncodingInHTTP10() {
        #expect(refusal("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") == 400)
    }

    /// `Transfer-Encoding: Chunked` is matched case-insensitively.
    @Test func chunkedIsCaseInsensitive() {
        let outcome = parse("POST / HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: ChUnKeD\r\n\r\n0\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.requests.first?.head.bodyFraming == .chunked)
    }
}
