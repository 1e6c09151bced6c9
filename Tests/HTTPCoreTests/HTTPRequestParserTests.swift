import Testing
@testable import HTTPCore

struct HTTPRequestParserTests {
    /// Every byte as the middle byte of a method and of a field name: accepted exactly when
    /// RFC 9110 §5.6.2 calls it a `tchar`, whether the request line arrives whole (found at
    /// once) or a byte at a time (checked byte by byte).
    @Test func methodAndFieldNameBytesAreExactlyTheRFCsTchars() {
        let tchars = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        /// Whether `input` makes one request and no refusal, fed whole and a byte at a time.
        func accepted(_ input: [UInt8]) -> (whole: Bool, bytewise: Bool) {
            let whole = feed([input]), split = feed(bytewise(input))
            return (whole.error == nil && whole.requests.count == 1, split.error == nil && split.requests.count == 1)
        }
        for byte in UInt8.min...UInt8.max {
            let method = accepted(bytes("G") + [byte] + bytes("T / HTTP/1.1\r\nHost: x\r\n\r\n"))
            #expect(method.whole == tchars.contains(byte), "method byte \(byte)")
            #expect(method.bytewise == tchars.contains(byte), "method byte \(byte), bytewise")
            guard byte != HTTPSyntax.colon else { continue }  // it ends the name
            let field = accepted(bytes("GET / HTTP/1.1\r\nHost: t\r\nX") + [byte] + bytes("Y: v\r\n\r\n"))
            #expect(field.whole == tchars.contains(byte), "field name byte \(byte)")
            #expect(field.bytewise == tchars.contains(byte), "field name byte \(byte), bytewise")
        }
    }

    /// Every byte in the middle of a Host value: accepted exactly when RFC 3986 allows it in
    /// `uri-host [":" port]` (unreserved, pct-encoded's `%`, sub-delims, `:` and an IP
    /// literal's brackets); a space inside is refused.
    @Test func hostBytesAreExactlyAnAuthoritysBytes() {
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~%!$&'()*+,;=:[]".utf8)
        for byte in UInt8.min...UInt8.max where byte != HTTPSyntax.cr && byte != HTTPSyntax.lf {
            let outcome = feed([bytes("GET / HTTP/1.1\r\nHost: a") + [byte] + bytes("b\r\n\r\n")])
            let accepted = outcome.error == nil && outcome.requests.count == 1
            #expect(accepted == allowed.contains(byte), "Host byte \(byte)")
        }
    }

    /// A simple GET yields one request with method, target, path, query, version and headers as sent.
    @Test func parsesSimpleGet() throws {
        let outcome = parse("GET /events/a%2Fb?event=x&y=1 HTTP/1.1\r\nHost: example\r\nAccept:  text/event-stream \r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.events.count == 1)
        let head = try #require(outcome.requests.first).head
        #expect(head.method == "GET")
        #expect(head.target == "/events/a%2Fb?event=x&y=1")
        #expect(head.rawPath == "/events/a%2Fb")
        #expect(head.query == "event=x&y=1")
        #expect(head.version == .http11)
        #expect(head.headers.fields.map(\.name) == ["Host", "Accept"])
        #expect(head.headers["accept"] == "text/event-stream")
        #expect(head.bodyFraming == .none)
        #expect(head.keepAlive)
        #expect(!head.expectsContinue)
        #expect(outcome.requests.first?.body == [])
    }

    /// A target without `?` has a nil query; a trailing `?` gives an empty one.
    @Test func queryIsNilWithoutQuestionMark() throws {
        let plain = try #require(parse("GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n").requests.first).head
        #expect(plain.rawPath == "/healthz")
        #expect(plain.query == nil)
        let empty = try #require(parse("GET /healthz? HTTP/1.1\r\nHost: t\r\n\r\n").requests.first).head
        #expect(empty.query == "")
    }

    /// Absolute-form targets are accepted and their path and query taken.
    @Test func acceptsAbsoluteForm() throws {
        let head = try #require(parse("GET http://example.com:8080/state/x?a=1 HTTP/1.1\r\nHost: t\r\n\r\n").requests.first).head
        #expect(head.target == "http://example.com:8080/state/x?a=1")
        #expect(head.rawPath == "/state/x")
        #expect(head.query == "a=1")
        let bare = try #require(parse("GET HTTPS://example.com HTTP/1.1\r\nHost: t\r\n\r\n").requests.first).head
        #expect(bare.rawPath == "/")
        #expect(bare.query == nil)
    }

    /// `OPTIONS *` is accepted with `*` as its path.
    @Test func acceptsAsteriskFormForOptions() throws {
        let head = try #require(parse("OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n").requests.first).head
        #expect(head.rawPath == "*")
        #expect(head.query == nil)
    }

    /// A Content-Length body is read exactly; the bytes after it start the next request.
    @Test func readsContentLengthBodyExactly() {
        let outcome = parse("POST /events/a HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n\r\nhelloGET / HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.requests.count == 2)
        #expect(outcome.requests.first?.body == bytes("hello"))
        #expect(outcome.requests.first?.head.bodyFraming == .contentLength(5))
        #expect(outcome.requests.last?.head.method == "GET")
    }

    /// Several requests in one buffer come out one by one, in order.
    @Test func pipelinedRequestsComeOutInOrder() throws {
        var parser = HTTPRequestParser()
        parser.append(bytes("GET /a HTTP/1.1\r\nHost: t\r\n\r\nPOST /b HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\nhiGET /c HTTP/1.1\r\nHost: t\r\n\r\nGET /d"))
        var paths: [String] = []
        for _ in 0..<3 {
            if case .request(let r)? = try parser.next() { paths.append(r.head.rawPath) }
        }
        #expect(paths == ["/a", "/b", "/c"])
        #expect(parser.isMidRequest)
        #expect(try parser.next() == nil)
        #expect(parser.isMidRequest)
        parser.append(bytes(" HTTP/1.1\r\nHost: t\r\n\r\n"))
        guard case .request(let last)? = try parser.next() else { Issue.record("expected /d"); return }
        #expect(last.head.rawPath == "/d")
        #expect(!parser.isMidRequest)
    }

    /// A long pipelined stream fed in odd-sized pieces (exercising compaction) parses every request intact.
    @Test func longPipelinedStreamInPieces() {
        var stream: [UInt8] = []
        for i in 0..<500 {
            stream += bytes("POST /events/t\(i) HTTP/1.1\r\nHost: t\r\nContent-Length: \(String(i).utf8.count)\r\n\r\n\(i)")
        }
        var pieces: [[UInt8]] = []
        var at = 0, size = 1
        while at < stream.count {
            let end = min(stream.count, at + size)
            pieces.append(Array(stream[at..<end]))
            at = end
            size = size % 997 + 13
        }
        let outcome = feed(pieces)
        #expect(outcome.error == nil)
        #expect(outcome.requests.count == 500)
        let intact = outcome.requests.enumerated().allSatisfy { i, r in
            r.head.rawPath == "/events/t\(i)" && r.body == bytes("\(i)")
        }
        #expect(intact)
    }

    /// `Expect: 100-continue` with the body not yet sent yields `.head` first, then `.request` once the body arrives.
    @Test func expectContinueYieldsHeadThenRequest() throws {
        var parser = HTTPRequestParser()
        parser.append(bytes("POST /state/x HTTP/1.1\r\nHost: t\r\nExpect: 100-Continue\r\nContent-Length: 3\r\n\r\n"))
        guard case .head(let head)? = try parser.next() else { Issue.record("expected .head"); return }
        #expect(head.expectsContinue)
        #expect(head.bodyFraming == .contentLength(3))
        #expect(try parser.next() == nil)
        #expect(parser.isMidRequest)
        parser.append(bytes("ab"))
        #expect(try parser.next() == nil)
        parser.append(bytes("c"))
        #expect(try parser.next() == .request(HTTPRequest(head: head, body: bytes("abc"))))
        #expect(try parser.next() == nil)
        #expect(!parser.isMidRequest)
    }

    /// A request whose body is already buffered yields only `.request`, never `.head`.
    @Test func bufferedBodyYieldsNoHeadEvent() {
        let outcome = parse("POST /x HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nz")
        #expect(outcome.events.count == 1)
        #expect(outcome.requests.first?.body == bytes("z"))
    }

    /// HTTP/1.0 closes by default and keeps the connection with `Connection: keep-alive`.
    @Test func http10KeepAliveHonoured() throws {
        let closed = try #require(parse("GET / HTTP/1.0\r\n\r\n").requests.first).head
        #expect(closed.version == .http10)
        #expect(!closed.keepAlive)
        let kept = try #require(parse("GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").requests.first).head
        #expect(kept.keepAlive)
    }

    /// HTTP/1.1 keeps the connection unless a `Connection` token is `close` (in any case, in a list).
    @Test func http11ConnectionClose() throws {
        let closed = try #require(parse("GET / HTTP/1.1\r\nHost: t\r\nConnection: upgrade, CLOSE\r\n\r\n").requests.first).head
        #expect(!closed.keepAlive)
        let kept = try #require(parse("GET / HTTP/1.1\r\nHost: t\r\nConnection: closed\r\n\r\n").requests.first).head
        #expect(kept.keepAlive)
    }

    /// Bare LF line endings are accepted in the head and the chunked framing.
    @Test func bareLFAccepted() throws {
        let outcome = parse("POST /x HTTP/1.1\nHost: t\nTransfer-Encoding: chunked\nX-A: 1\n\n3\nabc\n0\n\n")
        #expect(outcome.error == nil)
        let request = try #require(outcome.requests.first)
        #expect(request.head.headers["x-a"] == "1")
        #expect(request.body == bytes("abc"))
    }

    /// Empty lines before the request line are ignored.
    @Test func leadingEmptyLinesIgnored() {
        let outcome = parse("\r\n\n\r\nGET /a HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.requests.map(\.head.rawPath) == ["/a"])
    }

    /// Repeated identical Content-Length values (as fields or as a list) are accepted.
    @Test func identicalContentLengthsAccepted() {
        let outcome = parse("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\nContent-Length: 2, 2\r\n\r\nok")
        #expect(outcome.error == nil)
        #expect(outcome.requests.first?.body == bytes("ok"))
    }

    /// A POST without Content-Length or Transfer-Encoding has an empty body (the router decides on 411).
    @Test func postWithoutLengthHasEmptyBody() {
        let outcome = parse("POST /x HTTP/1.1\r\nHost: t\r\n\r\n")
        #expect(outcome.error == nil)
        #expect(outcome.requests.first?.head.bodyFraming == HTTPBodyFraming.none)
        #expect(outcome.requests.first?.body == [])
    }

    /// `Content-Length: 0` is a bodyless request: `.request` at once, never `.head`.
    @Test func zeroContentLengthIsBodyless() throws {
        var parser = HTTPRequestParser()
        parser.append(bytes("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n"))
        guard case .request(let r)? = try parser.next() else { Issue.record("expected .request"); return }
        #expect(r.body == [])
        #expect(!parser.isMidRequest)
    }

    /// Field values keep obs-text and inner whitespace, and lose surrounding OWS.
    @Test func fieldValuesTrimmedOnly() throws {
        let raw = "GET / HTTP/1.1\r\nHost: t\r\nX-Empty:\r\nX-T:\t a \t b\t \r\nX-U: caf\u{e9}\r\n\r\n"
        let head = try #require(parse(raw).requests.first).head
        #expect(head.headers["x-empty"] == "")
        #expect(head.headers["x-t"] == "a \t b")
        #expect(head.headers["x-u"] == "caf\u{e9}")
    }

    /// After the last request is consumed the buffer's storage is released; a pending partial request keeps it.
    @Test func bufferReleasedWhenDrained() throws {
        var parser = HTTPRequestParser()
        parser.append(bytes("GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\nGET /c"))
        #expect(parser.bufferCapacity > 0)
        _ = try parser.next()
        _ = try parser.next()
        #expect(try parser.next() == nil)
        #expect(parser.bufferCapacity > 0)
        parser.append(bytes(" HTTP/1.1\r\nHost: t\r\n\r\n"))
        _ = try parser.next()
        #expect(parser.bufferCapacity == 0)
        #expect(!parser.isMidRequest)

        var big = HTTPRequestParser()
        big.append(bytes("POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 60000\r\n\r\n") + [UInt8](repeating: 0x61, count: 60000))
        _ = try big.next()
        #expect(big.bufferCapacity == 0)
    }

    /// Partial progress is reported: nothing buffered at first, mid-request once a head starts.
    @Test func reportsMidRequest() throws {
        var parser = HTTPRequestParser()
        #expect(!parser.isMidRequest)
        parser.append(bytes("GET /a HTTP/1.1\r\nHost: x\r\n"))
        #expect(try parser.next() == nil)
        #expect(parser.isMidRequest)
        parser.append(bytes("\r\n"))
        #expect(try parser.next() != nil)
        #expect(!parser.isMidRequest)
    }
}
