import HTTPCore
import Testing
@testable import GatewayAPI

/// Where a request carries its token, and the access log's view of a target.
struct RequestTokenTests {
    private func head(_ target: String, _ headers: HTTPHeaders = HTTPHeaders()) -> HTTPRequestHead {
        let question = target.firstIndex(of: "?")
        return HTTPRequestHead(method: "GET", target: target, rawPath: String(target[..<(question ?? target.endIndex)]),
                               query: question.map { String(target[target.index(after: $0)...]) }, version: .http11,
                               headers: headers, bodyFraming: .none, keepAlive: true, expectsContinue: false)
    }

    /// `Bearer` in any letter case with one or more spaces; other schemes and empty credentials are no token.
    @Test func bearer() {
        #expect(RequestToken.bearer("Bearer abc.def.ghi") == "abc.def.ghi")
        #expect(RequestToken.bearer("bearer  abc") == "abc")
        #expect(RequestToken.bearer("BEARER abc") == "abc")
        #expect(RequestToken.bearer("Bearer ") == nil)
        #expect(RequestToken.bearer("Bearer") == nil)
        #expect(RequestToken.bearer("Bearerabc") == nil)
        #expect(RequestToken.bearer("Basic dXNlcjpwYXNz") == nil)
        #expect(RequestToken.bearer(nil) == nil)
    }

    /// Header, then `access_token` (decoded once), then the `sse_token` cookie; the first that holds one wins.
    @Test func order() {
        let cookie: HTTPHeaders = ["Cookie": "a=1; sse_token=from-cookie"]
        #expect(RequestToken.find(in: head("/e?access_token=from-query", ["Authorization": "Bearer from-header"])) == "from-header")
        #expect(RequestToken.find(in: head("/e?access_token=from-query", cookie)) == "from-query")
        #expect(RequestToken.find(in: head("/e?x=1", cookie)) == "from-cookie")
        #expect(RequestToken.find(in: head("/e?access_token=a%2Eb", cookie)) == "a.b")
        #expect(RequestToken.find(in: head("/e?access_token=&access_token=second")) == "second")
        #expect(RequestToken.find(in: head("/e?access_token=", cookie)) == "from-cookie")
        #expect(RequestToken.find(in: head("/e", ["Authorization": "Basic x"])) == nil)
        #expect(RequestToken.find(in: head("/e")) == nil)
    }

    /// Cookies: several fields and pairs, quotes removed, exact name, empty values passed over.
    @Test func cookies() {
        #expect(RequestToken.fromCookies(["a=1", "b=2;  sse_token=\"quoted\" "]) == "quoted")
        #expect(RequestToken.fromCookies(["SSE_TOKEN=x; sse_token_old=y"]) == nil)
        #expect(RequestToken.fromCookies(["sse_token=; sse_token=z"]) == "z")
    }

    /// The access log's target: every `access_token` value (its name decoded as the finder decodes it) becomes `…`.
    @Test func redacted() {
        #expect(RequestToken.redacted("/events/a?access_token=secret") == "/events/a?access_token=…")
        #expect(RequestToken.redacted("/events/a?x=1&access_token=s&y=2") == "/events/a?x=1&access_token=…&y=2")
        #expect(RequestToken.redacted("/events/a?access%5Ftoken=s") == "/events/a?access%5Ftoken=…")
        #expect(RequestToken.redacted("/events/a?access_tokens=s") == "/events/a?access_tokens=s")
        #expect(RequestToken.redacted("/events/a") == "/events/a")
        #expect(RequestToken.redacted("/events/a?access_token") == "/events/a?access_token")
    }
}
