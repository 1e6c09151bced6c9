import GatewayAPI
import HTTPCore
import Testing

struct ResponsePolicyTests {
    /// Every reply leaves with the CORS field; a refusal with its reason as one line of text.
    @Test func corsAndRefusalBodies() {
        let policy = ResponsePolicy(corsOrigin: "https://o.example")
        let ok = policy.finish(.response(HTTPResponse(status: .ok, headers: ["Content-Type": "application/json"])))
        #expect(ok.head.headers["Access-Control-Allow-Origin"] == "https://o.example")
        #expect(ok.head.headers["Content-Type"] == "application/json")
        let refused = policy.finish(.refused(.methodNotAllowed, "no", headers: ["Allow": "GET"]))
        #expect(refused.head.status == .methodNotAllowed)
        #expect(refused.head.headers["Allow"] == "GET")
        #expect(refused.head.headers["Access-Control-Allow-Origin"] == "https://o.example")
        #expect(refused.head.headers["Content-Type"] == "text/plain; charset=utf-8")
        guard case .bytes(let body) = refused.body else { Issue.record("not a fixed body"); return }
        #expect(body == Array("no\n".utf8))
    }
}
