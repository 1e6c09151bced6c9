import Synchronization
import Testing
import TestSupport
@testable import JWT

/// A verifier's memory of tokens it verified: it must answer exactly what verifying anew would.
struct ClaimsCacheTests {
    private let secret = Array("0123456789abcdef0123456789abcdef".utf8)

    /// A clock tests move by hand.
    final class Clock: Sendable {
        let seconds = Atomic<Int64>(1_800_000_000)
        var now: Double { Double(seconds.load(ordering: .relaxed)) }
    }

    /// A token used again is still refused once it expires: time rules are checked on every use.
    @Test func expiryAppliesToRememberedTokens() throws {
        let clock = Clock()
        let verifier = JWTVerifier(key: try JWTKey.hmac(secret: secret), now: { clock.now })
        let token = TestTokens.make(claims: TestTokens.claims(subscribe: ["*"], exp: clock.now + 10), signer: .hmac(secret))
        #expect((try? verifier.verify(token).get()) != nil)
        #expect((try? verifier.verify(token).get()) != nil)
        clock.seconds.store(Int64(clock.now) + 15, ordering: .relaxed)
        #expect(verifier.verify(token) == .failure(.expired))
    }

    /// After a good token was remembered, the same header and payload with another signature is refused.
    @Test func otherSignatureOfRememberedToken() throws {
        let verifier = JWTVerifier(key: try JWTKey.hmac(secret: secret))
        let token = TestTokens.make(claims: TestTokens.claims(publish: ["*"]), signer: .hmac(secret))
        #expect((try? verifier.verify(token).get()) != nil)
        let parts = token.split(separator: ".").map(String.init)
        var signature = try #require(Base64URL.decode(Array(parts[2].utf8)))
        signature[31] ^= 0x80
        #expect(verifier.verify(parts[0] + "." + parts[1] + "." + Base64URL.encode(signature)) == .failure(.badSignature))
        #expect(verifier.verify(parts[0] + "." + parts[1] + "." + Base64URL.encode(signature.prefix(31))) == .failure(.badSignature))
        #expect(verifier.verify(parts[0] + "." + parts[1] + ".") == .failure(.badSignature))
        #expect((try? verifier.verify(token).get()) != nil)
    }

    /// A remembered ES256 token and a second signature of the same claims (ECDSA signs differently each time) both verify.
    @Test func secondSignatureOfSameClaims() throws {
        let keys = TestTokenKeys.shared
        let verifier = JWTVerifier(key: try JWTKey.publicKey(pem: keys.ecPublic))
        let claims = TestTokens.claims(subscribe: ["a"])
        let first = TestTokens.make(claims: claims, signer: .privateKey(keys.ecPrivate))
        let second = TestTokens.make(claims: claims, signer: .privateKey(keys.ecPrivate))
        #expect(first != second)
        for token in [first, second, first, second] {
            #expect((try? verifier.verify(token).get()) != nil)
        }
    }

    /// More distinct tokens than the cache holds all verify, and a malformed twin of a remembered one is still malformed.
    @Test func beyondCapacity() throws {
        let verifier = JWTVerifier(key: try JWTKey.hmac(secret: secret))
        for index in 0..<(ClaimsCache.capacity + 50) {
            let token = TestTokens.make(claims: TestTokens.claims(subscribe: ["t/\(index)"]), signer: .hmac(secret))
            #expect(verifier.verify(token).map(\.claims.grants.subscribe) == .success([.exact("t/\(index)")]))
        }
        let token = TestTokens.make(claims: TestTokens.claims(subscribe: ["x"]), signer: .hmac(secret))
        #expect((try? verifier.verify(token).get()) != nil)
        if case .failure(.malformed) = verifier.verify(token + "=") {} else { Issue.record("padded twin accepted") }
        if case .failure(.malformed) = verifier.verify(token + ".") {} else { Issue.record("four-part twin accepted") }
    }
}
