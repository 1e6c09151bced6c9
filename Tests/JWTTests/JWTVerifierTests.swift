import Testing
import TestSupport
@testable import JWT

/// Tokens against each algorithm's key, signed at test time; the clock is fixed.
struct JWTVerifierTests {
    static let now = 1_800_000_000.0
    private let keys = TestTokenKeys.shared
    private let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    private func verifier(_ key: JWTKey, audience: String? = nil, at time: Double = now) -> JWTVerifier {
        JWTVerifier(key: key, audience: audience, now: { time })
    }
    private var hmac: JWTVerifier { verifier(try! JWTKey.hmac(secret: secret)) }
    private var rsa: JWTVerifier { verifier(try! JWTKey.publicKey(pem: keys.rsaPublic)) }
    private var ec: JWTVerifier { verifier(try! JWTKey.publicKey(pem: keys.ecPublic)) }
    private let grants = TestTokens.claims(subscribe: ["chat/*"], publish: ["chat/1"], exp: now + 60)

    /// A good token verifies with each algorithm, and its grants and expiry come through.
    @Test(arguments: ["HS256", "RS256", "ES256"])
    func eachAlgorithm(_ algorithm: String) throws {
        let (verifier, signer): (JWTVerifier, TestTokens.Signer) = switch algorithm {
        case "HS256": (hmac, .hmac(secret))
        case "RS256": (rsa, .privateKey(keys.rsaPrivate))
        default: (ec, .privateKey(keys.ecPrivate))
        }
        let token = TestTokens.make(claims: grants, signer: signer)
        let verified = try verifier.verify(token).get()
        #expect(verified.claims.grants == Grants(subscribe: [.prefix("chat")], publish: [.exact("chat/1")]))
        #expect(verified.acceptedUntil == Self.now + 60 + 5)
    }

    /// A token signed by another key, or with one bit of its signature or payload changed, is refused.
    @Test func badSignatures() throws {
        let other = TestTokens.make(claims: grants, signer: .privateKey(keys.otherECPrivate))
        #expect(ec.verify(other) == .failure(.badSignature))
        let wrongSecret = TestTokens.make(claims: grants, signer: .hmac(Array(secret.reversed())))
        #expect(hmac.verify(wrongSecret) == .failure(.badSignature))
        for (verifier, signer) in [(hmac, TestTokens.Signer.hmac(secret)), (rsa, .privateKey(keys.rsaPrivate)),
                                   (ec, .privateKey(keys.ecPrivate))] {
            let parts = TestTokens.make(claims: grants, signer: signer).split(separator: ".").map(String.init)
            var signature = Base64URL.decode(Array(parts[2].utf8))!
            signature[signature.count / 2] ^= 1
            let flipped = parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)
            #expect(verifier.verify(flipped) == .failure(.badSignature))
            let otherPayload = TestTokens.base64URL(Array(TestTokens.claims(subscribe: ["*"]).utf8))
            #expect(verifier.verify(parts[0] + "." + otherPayload + "." + parts[2]) == .failure(.badSignature))
        }
    }

    /// Alg confusion: an HS256 token whose secret is the RSA public key's PEM text is refused by the RSA key.
    @Test func algorithmConfusion() {
        let forged = TestTokens.make(claims: TestTokens.claims(subscribe: ["*"]), signer: .hmac(Array(keys.rsaPublic.utf8)))
        #expect(rsa.verify(forged) == .failure(.wrongAlgorithm(stated: "HS256", expected: .rs256)))
        let forgedEC = TestTokens.make(claims: TestTokens.claims(subscribe: ["*"]), signer: .hmac(Array(keys.ecPublic.utf8)))
        #expect(ec.verify(forgedEC) == .failure(.wrongAlgorithm(stated: "HS256", expected: .es256)))
    }

    /// `alg: none` is refused with an empty signature and with any signature, whatever its case.
    @Test func algNone() {
        for verifier in [hmac, rsa, ec] {
            for alg in ["none", "None", "NONE"] {
                let unsigned = TestTokens.make(header: "{\"alg\":\"\(alg)\"}", claims: grants, signer: .unsigned)
                #expect(verifier.verify(unsigned) == .failure(.wrongAlgorithm(stated: alg, expected: verifier.key.algorithm)))
                let signed = TestTokens.make(header: "{\"alg\":\"\(alg)\"}", claims: grants, signer: .hmac(secret))
                #expect(verifier.verify(signed) == .failure(.wrongAlgorithm(stated: alg, expected: verifier.key.algorithm)))
            }
        }
    }

    /// Another algorithm than the key's is refused even with a signature that would verify (HS256 key, "HS512" header; "hs256").
    @Test func otherAlgorithms() {
        for alg in ["HS512", "hs256", "RS256", "ES256", "PS256", ""] {
            let token = TestTokens.make(header: "{\"alg\":\"\(alg)\"}", claims: grants, signer: .hmac(secret))
            #expect(hmac.verify(token) == .failure(.wrongAlgorithm(stated: alg, expected: .hs256)))
        }
        let es256AsRS256 = TestTokens.make(header: "{\"alg\":\"ES256\"}", claims: grants, signer: .privateKey(keys.rsaPrivate))
        #expect(rsa.verify(es256AsRS256) == .failure(.wrongAlgorithm(stated: "ES256", expected: .rs256)))
    }

    /// An ES256 signature in DER (as libcrypto writes it) instead of r‖s is refused.
    @Test func es256NeedsRawSignature() throws {
        let token = TestTokens.make(claims: grants, signer: .privateKey(keys.ecPrivate))
        let parts = token.split(separator: ".").map(String.init)
        let raw = try #require(Base64URL.decode(Array(parts[2].utf8)))
        #expect(raw.count == 64)
        let der = try #require(ECDSASignature.der(fromRaw: raw))
        #expect(ec.verify(parts[0] + "." + parts[1] + "." + Base64URL.encode(der)) == .failure(.badSignature))
        #expect(TestTokens.raw(fromDER: der) == raw)
    }

    /// `exp` is enforced with 5 s of leeway: accepted until exp + 5 s, refused from then on.
    @Test func expiry() {
        let token = TestTokens.make(claims: TestTokens.claims(subscribe: ["*"], exp: Self.now), signer: .hmac(secret))
        let key = try! JWTKey.hmac(secret: secret)
        #expect((try? verifier(key, at: Self.now - 1).verify(token).get()) != nil)
        #expect((try? verifier(key, at: Self.now + 4.9).verify(token).get()) != nil)
        #expect(verifier(key, at: Self.now + 5).verify(token) == .failure(.expired))
        #expect(verifier(key, at: Self.now + 3600).verify(token) == .failure(.expired))
        let strict = JWTVerifier(key: key, leeway: 0, now: { Self.now })
        #expect(strict.verify(token) == .failure(.expired))
        let generous = JWTVerifier(key: key, leeway: 60, now: { Self.now + 30 })
        #expect(generous.leeway == 5)
        #expect(generous.verify(token) == .failure(.expired))
    }

    /// `nbf` is enforced with 5 s of leeway: refused until nbf − 5 s, accepted from then on.
    @Test func notBefore() {
        let token = TestTokens.make(claims: TestTokens.claims(subscribe: ["*"], nbf: Self.now), signer: .hmac(secret))
        let key = try! JWTKey.hmac(secret: secret)
        #expect(verifier(key, at: Self.now - 5.1).verify(token) == .failure(.notYetValid))
        #expect((try? verifier(key, at: Self.now - 5).verify(token).get()) != nil)
        #expect((try? verifier(key, at: Self.now + 100).verify(token).get()) != nil)
        #expect(verifier(key, at: Self.now).verify(token).map(\.acceptedUntil) == .success(nil))
    }

    /// With an audience configured, `aud` as a string or an array must contain it; without one, `aud` is not checked.
    @Test func audience() {
        let key = try! JWTKey.hmac(secret: secret)
        let strict = verifier(key, audience: "streams")
        func token(_ aud: String?) -> String {
            TestTokens.make(claims: TestTokens.claims(subscribe: ["*"], audJSON: aud), signer: .hmac(secret))
        }
        #expect((try? strict.verify(token("\"streams\"")).get()) != nil)
        #expect((try? strict.verify(token("[\"other\",\"streams\"]")).get()) != nil)
        #expect(strict.verify(token("\"other\"")) == .failure(.wrongAudience))
        #expect(strict.verify(token("[\"other\",\"Streams\"]")) == .failure(.wrongAudience))
        #expect(strict.verify(token("[]")) == .failure(.wrongAudience))
        #expect(strict.verify(token(nil)) == .failure(.wrongAudience))
        #expect((try? verifier(key).verify(token("\"other\"")).get()) != nil)
        #expect((try? verifier(key).verify(token(nil)).get()) != nil)
        if case .failure(.malformed) = strict.verify(token("[\"streams\",1]")) {} else { Issue.record("aud [string, number]") }
        if case .failure(.malformed) = strict.verify(token("42")) {} else { Issue.record("aud number") }
    }

    /// Malformed tokens are refused before any signature work: wrong part counts, padding, whitespace, bad JSON.
    @Test func malformed() {
        let good = TestTokens.make(claims: grants, signer: .hmac(secret))
        let parts = good.split(separator: ".").map(String.init)
        let cases = [
            "", ".", "..", "...", parts[0], parts[0] + "." + parts[1], good + ".", good + "." + parts[2],
            parts[0] + "=." + parts[1] + "." + parts[2], good + "=", " " + good, good + " ", good + "\n",
            TestTokens.make(header: "{\"alg\":\"HS256\",\"alg\":\"HS256\"}", claims: grants, signer: .hmac(secret)),
            TestTokens.make(header: "[\"HS256\"]", claims: grants, signer: .hmac(secret)),
            TestTokens.make(header: "{\"typ\":\"JWT\"}", claims: grants, signer: .hmac(secret)),
            TestTokens.make(header: "{\"alg\":256}", claims: grants, signer: .hmac(secret)),
            TestTokens.make(header: "{\"alg\":\"HS256\",\"crit\":[\"exp\"]}", claims: grants, signer: .hmac(secret)),
            String(repeating: "a", count: CompactToken.maximumBytes + 1),
        ]
        for token in cases {
            if case .failure(.malformed) = hmac.verify(token) {} else { Issue.record("accepted or mis-refused: \(token.debugDescription)") }
        }
        // An empty payload is canonical base64url; its signature does not match.
        #expect(hmac.verify(parts[0] + ".." + parts[2]) == .failure(.badSignature))
    }

    /// Claims are checked for type after the signature: a duplicate claim, a string `exp`, a bad pattern make the token malformed.
    @Test func malformedClaims() {
        for claims in [#"{"exp":1,"exp":1900000000}"#, #"{"exp":"1900000000"}"#, #"{"nbf":null}"#, #"{"sse":[]}"#,
                       #"{"sse":{"subscribe":"chat/*"}}"#, #"{"sse":{"subscribe":["chat*"]}}"#, #"{"sse":{"publish":[1]}}"#,
                       "[]", "{", #"{"a":1,}"#] {
            let token = TestTokens.make(claims: claims, signer: .hmac(secret))
            if case .failure(.malformed) = hmac.verify(token) {} else { Issue.record("claims \(claims)") }
        }
        let none = TestTokens.make(claims: "{}", signer: .hmac(secret))
        #expect(hmac.verify(none).map(\.claims) == .success(TokenClaims()))
    }

    /// `authorize` answers missing, invalid, expired and forbidden with the contract's statuses, headers and labels.
    @Test func refusals() {
        let token = TestTokens.make(claims: grants, signer: .hmac(secret))
        #expect(hmac.authorize(nil, .subscribe, topics: ["chat/1"]) == .failure(.missing))
        #expect((try? hmac.authorize(token, .subscribe, topics: ["chat/1", "chat/2/3"]).get()) != nil)
        #expect(hmac.authorize(token, .subscribe, topics: ["chat/1", "chat"]) == .failure(.forbidden(action: .subscribe, topic: "chat")))
        #expect(hmac.authorize(token, .publish, topics: ["chat/2"]) == .failure(.forbidden(action: .publish, topic: "chat/2")))
        #expect(hmac.authorize("x.y.z", .publish, topics: ["chat/1"]) == .failure(.invalid(.malformed("the header is not base64url without padding"))))

        let missing = TokenRefusal.missing
        #expect((missing.status, missing.wwwAuthenticate, missing.metricReason) == (401, "Bearer", "missing"))
        let invalid = TokenRefusal.invalid(.badSignature)
        #expect((invalid.status, invalid.wwwAuthenticate, invalid.metricReason) == (401, "Bearer error=\"invalid_token\"", "invalid"))
        let expired = TokenRefusal.invalid(.expired)
        #expect((expired.status, expired.wwwAuthenticate, expired.metricReason) == (401, "Bearer error=\"invalid_token\"", "expired"))
        for problem in [TokenProblem.notYetValid, .wrongAudience, .wrongAlgorithm(stated: "none", expected: .hs256), .malformed("x")] {
            #expect(TokenRefusal.invalid(problem).status == 401)
            #expect(TokenRefusal.invalid(problem).metricReason == "invalid")
        }
        let forbidden = TokenRefusal.forbidden(action: .subscribe, topic: "news/1")
        #expect((forbidden.status, forbidden.metricReason) == (403, "forbidden"))
        #expect(forbidden.reason.contains("'news/1'"))
    }
}
