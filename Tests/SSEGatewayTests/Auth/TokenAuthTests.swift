import Foundation
import HTTPCore
import Testing
import TestSupport
@testable import SSEGateway

/// The gateway with a JWT key, over real sockets (API.md, "Tokens (JWT)"): every
/// refusal with its status and `WWW-Authenticate`, each algorithm, the three places a
/// token can travel and their order, and a stream ended when its token expires.
struct TokenAuthTests {
    static let secret = "test-secret-made-for-this-run-\(UUID().uuidString)"
    static var signer: TestTokens.Signer { .hmac(Array(secret.utf8)) }
    private static let later = TestTokens.now + 3600

    /// A gateway with the HS256 secret, tokens needed to subscribe.
    private func withTokenGateway(_ configure: @escaping (inout GatewayConfiguration) -> Void = { _ in },
                                  _ body: (RunningGateway) async throws -> Void) async throws {
        try await withGateway({
            $0.jwtSecret = Self.secret
            $0.subscribeAuth = .token
            configure(&$0)
        }, body)
    }

    private func token(subscribe: [String] = [], publish: [String] = [], exp: Double? = later,
                       signer: TestTokens.Signer = signer) -> String {
        TestTokens.make(claims: TestTokens.claims(subscribe: subscribe, publish: publish, exp: exp), signer: signer)
    }

    private func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer " + token)] }

    /// The status, `WWW-Authenticate` and body of a refused request.
    private func refusal(_ response: HTTPClient.Response) -> (Int, String?, String) {
        (response.status, response.head.headers["WWW-Authenticate"], response.text)
    }

    /// Subscribing without a token, with a bad one, or with one that does not grant the topic: 401 or 403 as the contract says, nothing subscribed.
    @Test func subscribeRefusals() async throws {
        try await withTokenGateway { gateway in
            let missing = try await gateway.send("GET", "/events/chat/1")
            #expect(refusal(missing).0 == 401 && refusal(missing).1 == "Bearer")
            let invalid = "Bearer error=\"invalid_token\""
            let cases: [(String, String)] = [
                ("malformed", "not.a.token"),
                ("badly signed", token(subscribe: ["*"], signer: .hmac(Array("another-secret-of-at-least-32-bytes!".utf8)))),
                ("alg none", TestTokens.make(header: "{\"alg\":\"none\"}", claims: TestTokens.claims(subscribe: ["*"]), signer: .unsigned)),
                ("other algorithm", TestTokens.make(claims: TestTokens.claims(subscribe: ["*"]),
                                                    signer: .privateKey(TestTokenKeys.shared.ecPrivate))),
                ("expired", token(subscribe: ["*"], exp: TestTokens.now - 60)),
                ("not yet valid", TestTokens.make(claims: TestTokens.claims(subscribe: ["*"], nbf: TestTokens.now + 60), signer: Self.signer)),
            ]
            for (what, bad) in cases {
                let answer = try await gateway.send("GET", "/events/chat/1", headers: bearer(bad))
                #expect(answer.status == 401, "\(what)")
                #expect(answer.head.headers["WWW-Authenticate"] == invalid, "\(what)")
            }
            let forbidden = try await gateway.send("GET", "/state/chat/1", headers: bearer(token(subscribe: ["news/*"])))
            #expect(forbidden.status == 403)
            #expect(forbidden.text.contains("'chat/1'"))
            // HEAD answers what GET would.
            let head = try await gateway.send("HEAD", "/events/chat/1")
            #expect(head.status == 401)
            // Nothing was subscribed: a publish reaches nobody.
            let reply = try await gateway.post("/events/chat/1", "x", headers: bearer(token(publish: ["chat/*"])))
            #expect(reply.text == "{\"id\":\"1\",\"subscribers\":0}\n")
            let metrics = try await gateway.metrics()
            #expect(metrics["sse_gateway_auth_failures_total{reason=\"missing\"}"] == 2)
            #expect(metrics["sse_gateway_auth_failures_total{reason=\"invalid\"}"] == 5)
            #expect(metrics["sse_gateway_auth_failures_total{reason=\"expired\"}"] == 1)
            #expect(metrics["sse_gateway_auth_failures_total{reason=\"forbidden\"}"] == 1)
        }
    }

    /// With an audience configured, `aud` as a string or an array must contain it.
    @Test func audience() async throws {
        try await withTokenGateway({ $0.jwtAudience = "streams" }) { gateway in
            func aud(_ json: String?) -> String {
                TestTokens.make(claims: TestTokens.claims(subscribe: ["*"], exp: Self.later, audJSON: json), signer: Self.signer)
            }
            for (json, status) in [("\"streams\"", 200), ("[\"x\",\"streams\"]", 200), ("\"x\"", 401), (nil, 401)] as [(String?, Int)] {
                let answer = try await gateway.send("HEAD", "/events/a", headers: bearer(aud(json)))
                #expect(answer.status == status, "aud \(json ?? "absent")")
            }
        }
    }

    /// Publishing needs a token granting the topic; a refused publish changes nothing and consumes no id.
    @Test func publishRefusals() async throws {
        try await withTokenGateway { gateway in
            let stream = try await gateway.subscribe("/events/chat/1", headers: bearer(token(subscribe: ["chat/1"])))
            defer { stream.close() }
            #expect(stream.head.status == 200)
            let missing = try await gateway.post("/events/chat/1", "no")
            #expect(refusal(missing).0 == 401 && refusal(missing).1 == "Bearer")
            let expired = try await gateway.post("/events/chat/1", "no", headers: bearer(token(publish: ["*"], exp: TestTokens.now - 60)))
            #expect(expired.status == 401 && expired.text.contains("expired"))
            let subscribeOnly = try await gateway.post("/events/chat/1", "no", headers: bearer(token(subscribe: ["*"])))
            #expect(subscribeOnly.status == 403 && subscribeOnly.text.contains("'chat/1'"))
            #expect(subscribeOnly.head.headers["WWW-Authenticate"] == "Bearer error=\"insufficient_scope\"")
            let id = try await gateway.publish("/events/chat/1", "yes", headers: bearer(token(publish: ["chat/*"])))
            #expect(id == 1)
            let event = try await stream.next()
            #expect(event?.data == "yes" && event?.id == "1")
        }
    }

    /// `--publish-token` beside a JWT key: its bearer publishes too, and a JWT still works.
    @Test func publishTokenBesideKey() async throws {
        try await withGateway({ $0.jwtSecret = Self.secret; $0.publishToken = "shared-publish-token" }) { gateway in
            let shared = try await gateway.publish("/state/x", "a", headers: bearer("shared-publish-token"))
            let jwt = try await gateway.publish("/state/x", "b", headers: bearer(token(publish: ["x"])))
            let wrong = try await gateway.post("/state/x", "c", headers: bearer("wrong"))
            #expect((shared, jwt, wrong.status) == (1, 2, 401))
            // Subscribing stays open (--subscribe-auth open is the default).
            let head = try await gateway.send("HEAD", "/state/x")
            #expect(head.status == 200)
        }
    }

    /// RS256 and ES256 tokens work with the matching public key, and HS256 with the secret; each refuses the others.
    @Test(arguments: ["HS256", "RS256", "ES256"])
    func eachAlgorithm(_ algorithm: String) async throws {
        let keys = TestTokenKeys.shared
        let (signer, others): (TestTokens.Signer, [TestTokens.Signer]) = switch algorithm {
        case "HS256": (Self.signer, [.privateKey(keys.rsaPrivate), .privateKey(keys.ecPrivate)])
        case "RS256": (.privateKey(keys.rsaPrivate), [Self.signer, .privateKey(keys.ecPrivate)])
        default: (.privateKey(keys.ecPrivate), [Self.signer, .privateKey(keys.rsaPrivate)])
        }
        try await withGateway({
            switch algorithm {
            case "HS256": $0.jwtSecret = Self.secret
            case "RS256": $0.jwtPublicKey = keys.rsaPublicFile
            default: $0.jwtPublicKey = keys.ecPublicFile
            }
            $0.subscribeAuth = .token
        }) { gateway in
            let good = token(subscribe: ["t/*"], publish: ["t/*"], signer: signer)
            let stream = try await gateway.subscribe("/events/t/1?access_token=" + good)
            defer { stream.close() }
            #expect(stream.head.status == 200)
            let id = try await gateway.publish("/events/t/1", algorithm, headers: bearer(good))
            let event = try await stream.next()
            #expect(id == 1 && event?.data == algorithm)
            for other in others {
                let answer = try await gateway.send("HEAD", "/events/t/1", headers: bearer(token(subscribe: ["*"], signer: other)))
                #expect(answer.status == 401)
            }
            // Alg confusion: HS256 signed with the public key's PEM text as the secret.
            if algorithm != "HS256" {
                let pem = try String(contentsOfFile: algorithm == "RS256" ? keys.rsaPublicFile : keys.ecPublicFile, encoding: .utf8)
                let forged = token(subscribe: ["*"], signer: .hmac(Array(pem.utf8)))
                let answer = try await gateway.send("HEAD", "/events/t/1", headers: bearer(forged))
                #expect(answer.status == 401)
            }
        }
    }

    /// The token is taken from the Authorization header, else `?access_token=`, else the `sse_token` cookie; the first place holding one wins.
    @Test func tokenPlacesAndPrecedence() async throws {
        try await withTokenGateway { gateway in
            let good = token(subscribe: ["p"])
            let bad = token(subscribe: ["p"], signer: .hmac(Array("another-secret-of-at-least-32-bytes!".utf8)))
            let cases: [(String, [(String, String)], Int)] = [
                ("/events/p", bearer(good), 200),
                ("/events/p?access_token=" + good, [], 200),
                ("/events/p", [("Cookie", "theme=dark; sse_token=" + good)], 200),
                // Header before query before cookie, even when the first one is bad.
                ("/events/p?access_token=" + good, bearer(bad), 401),
                ("/events/p?access_token=" + bad, bearer(good), 200),
                ("/events/p?access_token=" + bad, [("Cookie", "sse_token=" + good)], 401),
                ("/events/p?access_token=" + good, [("Cookie", "sse_token=" + bad)], 200),
                // Another scheme, or an empty value, is no token there.
                ("/events/p?access_token=" + good, [("Authorization", "Basic dXNlcjpwYXNz")], 200),
                ("/events/p?access_token=", [("Cookie", "sse_token=" + good)], 200),
                ("/events/p?access_token=", [], 401),
            ]
            for (index, (target, headers, status)) in cases.enumerated() {
                let answer = try await gateway.send("HEAD", target, headers: headers)
                #expect(answer.status == status, "case \(index)")
            }
        }
    }

    /// Topic patterns at their boundaries: `chat/*` grants `chat/a/b`, not `chat` nor `chatroom/x`.
    @Test func patternBoundaries() async throws {
        try await withTokenGateway { gateway in
            let chat = bearer(token(subscribe: ["chat/*"]))
            let cases: [(String, [(String, String)], Int)] = [
                ("/events/chat/a/b", chat, 200), ("/events/chat", chat, 403), ("/events/chatroom/x", chat, 403),
                // Patterns match the decoded name: %61 is `a`.
                ("/events/chat/%61", bearer(token(subscribe: ["chat/a"])), 200),
            ]
            for (target, headers, status) in cases {
                let answer = try await gateway.send("HEAD", target, headers: headers)
                #expect(answer.status == status, "\(target)")
            }
        }
    }

    /// A stream ends when its token stops being accepted (exp plus the 5 s leeway); reconnecting with it is then refused.
    @Test func streamEndsAtExpiry() async throws {
        try await withTokenGateway { gateway in
            // exp 1 s ahead (whole seconds): the gateway accepts the token until exp + 5 s,
            // time enough to subscribe even on a loaded machine, and ends the stream then.
            let exp = TestTokens.now.rounded(.down) + 1
            let expiring = token(subscribe: ["e"], publish: ["e"], exp: exp)
            let stream = try await gateway.subscribe("/events/e", headers: bearer(expiring))
            defer { stream.close() }
            #expect(stream.head.status == 200)
            let publisher = bearer(token(publish: ["e"]))
            let id = try await gateway.publish("/events/e", "before", headers: publisher)
            let first = try await stream.next()
            #expect(id == 1 && first?.data == "before")
            let end = try await stream.next(within: 20)
            let endedAt = TestTokens.now
            #expect(end == nil && stream.ended)
            // Not before the token stopped being accepted, and soon after.
            #expect(endedAt >= exp + 5 - 0.1 && endedAt < exp + 5 + 3, "ended \(endedAt - exp) s after exp")
            let subscribers = try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 0, within: 2)
            #expect(subscribers == 0)
            let again = try await gateway.send("GET", "/events/e", headers: bearer(expiring))
            #expect(again.status == 401 && again.text.contains("expired"))
        }
    }
}
