import Testing
@testable import HTTPCore

/// Requests the server can't trust, in the request line and header fields (API.md).
struct HTTPRequestRefusalTests {
    // MARK: Request line

    /// Two spaces between method and target are a 400.
    @Test func extraSpaceInRequestLine() { #expect(refusal("GET  /x HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// A space after the version is a 400.
    @Test func trailingSpaceAfterVersion() { #expect(refusal("GET /x HTTP/1.1 \r\n\r\n") == 400) }

    /// A request line without a version is a 400.
    @Test func missingVersion() { #expect(refusal("GET /x\r\n\r\n") == 400) }

    /// A request line with only a method is a 400.
    @Test func methodOnly() { #expect(refusal("GET\r\n\r\n") == 400) }

    /// An empty request target is a 400.
    @Test func emptyTarget() { #expect(refusal("GET  HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// A target not starting with `/` (and not `*` or absolute-form) is a 400.
    @Test func relativeTarget() { #expect(refusal("GET x/y HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// `*` is a 400 for any method but OPTIONS.
    @Test func asteriskForGet() { #expect(refusal("GET * HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// Absolute-form without an authority is a 400.
    @Test func absoluteFormWithoutHost() { #expect(refusal("GET http:///x HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// A control character in the target is a 400.
    @Test func controlCharacterInTarget() { #expect(refusal("GET /a\u{01}b HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// A non-ASCII byte in the target (it must be percent-encoded) is a 400.
    @Test func nonASCIITarget() { #expect(refusal("GET /caf\u{e9} HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// A method with a non-token character is a 400.
    @Test func invalidMethodCharacter() { #expect(refusal("GE(T /x HTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    /// Non-HTTP bytes (a TLS ClientHello) are refused at once, without waiting for a line end.
    @Test func tlsHandshakeRefusedImmediately() {
        #expect(feed([[0x16, 0x03, 0x01, 0x02, 0x00]]).error?.status == .badRequest)
    }

    /// A target longer than maxURIBytes is a 414 as soon as it passes the limit, before the line ends.
    @Test func uriTooLongBeforeLineEnd() {
        #expect(refusal("GET /" + String(repeating: "a", count: 100), limits: limits(uri: 64)) == 414)
        #expect(refusal("GET /" + String(repeating: "a", count: 63) + " HTTP/1.1\r\nHost: t\r\n\r\n", limits: limits(uri: 64)) == nil)
        #expect(refusal("GET /" + String(repeating: "a", count: 64) + " HTTP/1.1\r\nHost: t\r\n\r\n", limits: limits(uri: 64)) == 414)
    }

    /// A URI that is also past the head limit is a 414, not a 431.
    @Test func uriTooLongTakesPrecedence() {
        #expect(refusal("GET /" + String(repeating: "a", count: 30_000)) == 414)
    }

    /// A well-formed but unsupported version (HTTP/2.0, HTTP/1.2, HTTP/0.9) is a 505.
    @Test(arguments: ["HTTP/2.0", "HTTP/1.2", "HTTP/0.9", "HTTP/3.0"])
    func unsupportedVersion(_ version: String) { #expect(refusal("GET / \(version)\r\n\r\n") == 505) }

    /// A malformed version is a 400.
    @Test(arguments: ["HTTP/1.10", "http/1.1", "HTTX/1.1", "HTTP/1", "HTTP/a.b", "HTTP/1.1x", "1.1"])
    func garbageVersion(_ version: String) { #expect(refusal("GET / \(version)\r\n\r\n") == 400) }

    /// A bare CR in the request line is a 400.
    @Test func bareCRInRequestLine() { #expect(refusal("GET /x\rHTTP/1.1\r\nHost: t\r\n\r\n") == 400) }

    // MARK: Header fields

    /// A field line without a colon is a 400.
    @Test func fieldWithoutColon() { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\nHost example\r\n\r\n") == 400) }

    /// Whitespace between the field name and the colon is a 400.
    @Test func whitespaceBeforeColon() { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\nX-A : example\r\n\r\n") == 400) }

    /// An empty field name is a 400.
    @Test func emptyFieldName() { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\n: example\r\n\r\n") == 400) }

    /// A non-token character in a field name is a 400.
    @Test func invalidFieldNameCharacter() { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\nX(y): 1\r\n\r\n") == 400) }

    /// Obsolete line folding (a line starting with SP or HTAB) is a 400.
    @Test(arguments: [" ", "\t"])
    func obsFold(_ lead: String) { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\nX-A: 1\r\n\(lead)continued\r\n\r\n") == 400) }

    /// NUL in a field value is a 400.
    @Test func nulInValue() { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\nX-A: a\u{0}b\r\n\r\n") == 400) }

    /// A bare CR in a field value is a 400.
    @Test func bareCRInValue() { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\nX-A: a\rb\r\n\r\n") == 400) }

    /// A CR right before another CR (CR CR LF) is a bare CR: 400.
    @Test func doubleCRLineEnd() { #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\nX-A: a\r\r\n\r\n") == 400) }

    /// A control character other than HTAB in a field value is a 400.
    @Test(arguments: [0x01, 0x1B, 0x7F] as [UInt8])
    func controlInValue(_ byte: UInt8) {
        let raw = bytes("GET / HTTP/1.1\r\nHost: t\r\nX-A: a") + [byte] + bytes("b\r\n\r\n")
        #expect(feed([raw]).error?.status == .badRequest)
    }

    /// Field values are checked and field lines scanned eight bytes at a time: a control
    /// byte (or a bare CR) at any position of a value up to three words long, whatever
    /// the value's alignment in the head, is still a 400; HTAB, SP and obs-text at any
    /// position are kept, exactly as sent.
    @Test func everyPositionOfAValueIsChecked() {
        let refused: [UInt8] = Array(0x00...0x08) + Array(0x0B...0x1F) + [0x7F]
        for length in 1...24 {
            for position in 0..<length {
                for nameLength in [1, 4, 7] {
                    let name = String(repeating: "n", count: nameLength)
                    var value = [UInt8](repeating: UInt8(ascii: "v"), count: length)
                    for byte in refused {
                        value[position] = byte
                        let raw = bytes("GET / HTTP/1.1\r\n\(name): x") + value + bytes("y\r\nHost: t\r\n\r\n")
                        #expect(feed([raw]).error?.status == .badRequest, "byte \(byte) at \(position) of \(length)")
                    }
                    for byte in [0x09, 0x20, 0x80, 0xC3, 0xFF] as [UInt8] {
                        value[position] = byte
                        let raw = bytes("GET / HTTP/1.1\r\n\(name): x") + value + bytes("y\r\nHost: t\r\n\r\n")
                        let outcome = feed([raw])
                        #expect(outcome.error == nil, "byte \(byte) at \(position) of \(length)")
                        var kept: [UInt8] = []
                        outcome.requests.first?.head.headers.forEachField { _, value in
                            kept = Array(value)
                            return false
                        }
                        #expect(kept == [UInt8(ascii: "x")] + value + [UInt8(ascii: "y")])
                    }
                }
            }
        }
    }

    /// `hasByte(in:below:)` and `hasByte(in:equalTo:)` against the byte-by-byte answer, for
    /// every byte value at every position of a word among others above and below it.
    @Test func wordTestsMatchByteByByte() {
        for fill in [0x00, 0x0E, 0x20, 0x41, 0x7E, 0x80, 0xFF] as [UInt8] {
            for position in 0..<8 {
                for byte in 0...255 as ClosedRange<UInt8> {
                    var word = [UInt8](repeating: fill, count: 8)
                    word[position] = byte
                    let value = word.withUnsafeBytes { HTTPSyntax.word($0, at: 0) }
                    for n in [1, 0x0E, 0x20, 0x80] as [UInt8] {
                        #expect(HTTPSyntax.hasByte(in: value, below: n) == word.contains { $0 < n })
                    }
                    #expect(HTTPSyntax.hasByte(in: value, equalTo: 0x7F) == word.contains(0x7F))
                }
            }
        }
    }

    /// The word-at-a-time search finds what `firstIndex(of:)` finds, from every start, with
    /// the byte at every position of buffers of 0–24 bytes, once or twice, or not at all.
    @Test func firstIndexMatchesTheStandardOne() {
        for count in 0...24 {
            for first in -1..<count {
                for second in [-1, count - 1] {
                    var bytes = [UInt8](repeating: 0x41, count: count)
                    if first >= 0 { bytes[first] = 0x20 }
                    if second >= 0 { bytes[second] = 0x20 }
                    for start in 0...count {
                        let expected = bytes[start...].firstIndex(of: 0x20)
                        let found = bytes.withUnsafeBytes { HTTPSyntax.firstIndex(of: 0x20, in: $0, from: start) }
                        #expect(found == expected, "\(bytes) from \(start)")
                    }
                }
            }
        }
    }

    /// A head larger than maxHeaderBytes is a 431 while still incomplete.
    @Test func headTooLargeIncomplete() {
        let raw = "GET / HTTP/1.1\r\nHost: t\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 100)
        #expect(refusal(raw, limits: limits(header: 1024)) == 431)
    }

    /// RFC 9112 §3.2: an HTTP/1.1 request without `Host`, a request with two, or one whose value is
    /// not `uri-host [":" port]` (RFC 3986's bytes: no space, `/`, `@`, `?` or `#`) is a 400.
    @Test func hostIsRequiredOnceInHTTP11() {
        #expect(refusal("GET / HTTP/1.1\r\n\r\n") == 400)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n") == 400)
        #expect(refusal("GET / HTTP/1.1\r\nHOST: a\r\n\r\n") == nil)
        #expect(refusal("GET / HTTP/1.1\r\nHost:\r\n\r\n") == nil)  // Empty: a URI without authority.
        #expect(refusal("GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n") == nil)
        #expect(refusal("GET / HTTP/1.1\r\nHost: caf%C3%A9.example:80\r\n\r\n") == nil)
        #expect(refusal("GET / HTTP/1.1\r\nHost: a, b\r\n\r\n") == 400)  // Two merged by a proxy.
        #expect(refusal("GET / HTTP/1.1\r\nHost: a/b\r\n\r\n") == 400)
        #expect(refusal("GET / HTTP/1.1\r\nHost: user@a\r\n\r\n") == 400)
        #expect(refusal("GET / HTTP/1.0\r\n\r\n") == nil)
    }

    /// A complete head one byte over maxHeaderBytes is a 431; one exactly at it is accepted.
    @Test func headTooLargeComplete() {
        let raw = "GET / HTTP/1.1\r\nHost: t\r\nX-A: 1234\r\n\r\n"  // 38 bytes
        #expect(refusal(raw, limits: limits(header: 38)) == nil)
        #expect(refusal(raw, limits: limits(header: 37)) == 431)
    }

    /// A request line without end, longer than the head limit (but within the URI limit), is a 431.
    @Test func endlessRequestLine() {
        #expect(refusal("GET /" + String(repeating: "a", count: 2000), limits: limits(header: 1024, uri: 4096)) == 431)
    }

    /// After a refusal the parser is dead: every later call throws the same error, appended bytes are ignored.
    @Test func refusalIsSticky() throws {
        var parser = HTTPRequestParser()
        parser.append(bytes("GET / HTTP/2.0\r\n\r\n"))
        #expect(throws: HTTPParseError.self) { try parser.next() }
        parser.append(bytes("GET / HTTP/1.1\r\nHost: t\r\n\r\n"))
        var errors: [HTTPParseError] = []
        for _ in 0..<2 {
            do { _ = try parser.next() } catch { errors.append(error) }
        }
        #expect(errors.count == 2)
        #expect(errors.allSatisfy { $0.status == .versionNotSupported })
        #expect(!parser.isMidRequest)
        #expect(parser.bufferCapacity == 0)
    }

    /// Every refusal's reason is one line.
    @Test func reasonsAreOneLine() {
        let inputs = ["GET / HTTP/2.0\r\n\r\n", "GET / HTTP/1.1\r\nHost: t\r\nX-A: a\rb\r\n\r\n", "GET /\u{7F} HTTP/1.1\r\nHost: t\r\n\r\n"]
        for raw in inputs {
            let reason = parse(raw).error?.reason ?? ""
            #expect(!reason.isEmpty)
            #expect(!reason.contains("\n") && !reason.contains("\r"))
        }
    }
}
