import Testing
@testable import HTTPCore

/// A request's fields as the parser keeps them (bytes, `HTTPFieldBlock`) behind the same
/// `HTTPHeaders` API that fields built in code have.
struct ReceivedHeadersTests {
    /// HTTP/1.0, which needs no `Host`: the fields are exactly the ones given.
    private func head(_ fields: String) throws -> HTTPRequestHead {
        let outcome = parse("GET / HTTP/1.0\r\n\(fields)\r\n")
        let request = try #require(outcome.requests.first, "refused: \(String(describing: outcome.error))")
        return request.head
    }

    /// Names are looked up ASCII case-insensitively on the received bytes.
    @Test func lookupIgnoresCase() throws {
        let headers = try head("Content-Type: text/plain\r\nX-Trace: a\r\n").headers
        #expect(headers["content-type"] == "text/plain")
        #expect(headers["CONTENT-TYPE"] == "text/plain")
        #expect(headers["Content-Type"] == "text/plain")
        #expect(headers.contains("x-trace"))
        #expect(!headers.contains("Content-Typ"))
        #expect(headers["Accept"] == nil)
        #expect(headers.count == 2)
    }

    /// A repeated field keeps every value in order; the subscript gives the first.
    @Test func duplicateFieldsKeepEveryValue() throws {
        let headers = try head("Cookie: a=1\r\nAccept: */*\r\ncookie: b=2\r\nCOOKIE: c=3\r\n").headers
        #expect(headers["Cookie"] == "a=1")
        #expect(headers.values(for: "cookie") == ["a=1", "b=2", "c=3"])
        #expect(headers.values(for: "Origin") == [])
    }

    /// Values lose surrounding SP/HTAB and keep inner whitespace; an empty value is "".
    @Test func valuesAreTrimmed() throws {
        let headers = try head("A: \t one  two \t\r\nB:\r\nC:   \r\nD:x\r\n").headers
        #expect(headers["A"] == "one  two")
        #expect(headers["B"] == "")
        #expect(headers["C"] == "")
        #expect(headers["D"] == "x")
    }

    /// Iteration and `fields` give names exactly as sent, in arrival order.
    @Test func iterationKeepsOrderAndSpelling() throws {
        let headers = try head("host: x\r\nX-Mixed-CASE: 1\r\nAccept: */*\r\n").headers
        #expect(headers.fields.map(\.name) == ["host", "X-Mixed-CASE", "Accept"])
        #expect(headers.map(\.value) == ["x", "1", "*/*"])
    }

    /// obs-text in a value is kept as bytes and repaired only when a `String` is made.
    @Test func obsTextValue() throws {
        var raw = bytes("GET / HTTP/1.1\r\nHost: t\r\nX-Name: caf")
        raw += [0xC3, 0xA9]  // é in UTF-8
        raw += bytes("\r\nX-Bad: a")
        raw += [0xFF]
        raw += bytes("b\r\n\r\n")
        let headers = try #require(feed([raw]).requests.first).head.headers
        #expect(headers["x-name"] == "café")
        #expect(headers["X-Bad"] == "a\u{FFFD}b")
    }

    /// The parser's field rules still hold on the byte path: obs-fold, whitespace before
    /// the colon, a missing colon and control characters in a value are refused with 400.
    @Test(arguments: [
        "A: 1\r\n folded\r\n", "A: 1\r\n\tfolded\r\n", "A : 1\r\n", "A\t: 1\r\n", "NoColon\r\n",
        ": empty name\r\n", "A: bell\u{07}\r\n", "A: del\u{7F}\r\n",
    ])
    func fieldRulesStillApply(_ fields: String) {
        #expect(refusal("GET / HTTP/1.1\r\nHost: t\r\n\(fields)\r\n") == 400)
    }

    /// Fields arriving a byte at a time end up the same as fields arriving at once.
    @Test func splitArrivalGivesTheSameFields() throws {
        let raw = bytes("POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nX-A:  v \r\n\r\nok")
        let whole = try #require(feed([raw]).requests.first)
        let pieces = try #require(feed(bytewise(raw)).requests.first)
        #expect(pieces.head.headers == whole.head.headers)
        #expect(pieces.head.headers.values(for: "x-a") == ["v"])
    }

    /// Received fields equal the same fields built in code; changing them keeps the others.
    @Test func receivedFieldsBehaveLikeBuiltOnes() throws {
        var headers = try head("Host: h\r\nAccept: */*\r\naccept: text/html\r\n").headers
        var built = HTTPHeaders()
        built.add(name: "Host", value: "h")
        built.add(name: "Accept", value: "*/*")
        built.add(name: "accept", value: "text/html")
        #expect(headers == built)
        headers.replaceOrAdd(name: "ACCEPT", value: "x")
        #expect(headers.fields.map(\.name) == ["Host", "ACCEPT"])
        #expect(headers["accept"] == "x")
        headers.add(name: "Host", value: "second")
        #expect(headers.values(for: "host") == ["h", "second"])
    }

    /// `firstValue(ofLowercase:equalsIgnoringCase:)` compares the first matching field's
    /// bytes, whatever the case of its name, on both representations.
    @Test func firstValueComparison() throws {
        let received = try head("Connection: Close\r\nconnection: keep-alive\r\n").headers
        #expect(received.firstValue(ofLowercase: "connection", equalsIgnoringCase: "close"))
        #expect(!received.firstValue(ofLowercase: "connection", equalsIgnoringCase: "keep-alive"))
        let built: HTTPHeaders = ["Content-Type": "text/plain", "CONNECTION": "keep-alive"]
        #expect(built.firstValue(ofLowercase: "connection", equalsIgnoringCase: "keep-alive"))
        #expect(!built.firstValue(ofLowercase: "content-length", equalsIgnoringCase: "keep-alive"))
        #expect(!HTTPHeaders().firstValue(ofLowercase: "connection", equalsIgnoringCase: "close"))
    }

    /// Known methods come back as the same text, others as sent (case kept).
    @Test(arguments: ["GET", "POST", "HEAD", "OPTIONS", "PUT", "get", "PATCH"])
    func methodText(_ method: String) throws {
        let request = try #require(parse("\(method) /m HTTP/1.1\r\nHost: t\r\n\r\n").requests.first)
        #expect(request.head.method == method)
    }
}
