import Foundation
import Testing
import TestSupport
@testable import JWT

struct JWTKeyTests {
    private let keys = TestTokenKeys.shared

    private func publicKey(file: String) throws -> JWTKey {
        try JWTKey.publicKey(pem: try String(contentsOfFile: file, encoding: .utf8))
    }

    private func refusal(file: String) throws -> String {
        do {
            _ = try publicKey(file: file)
            return "accepted"
        } catch let error as JWTKeyError {
            return error.message
        }
    }

    /// A secret under 32 bytes is refused with its length; 32 bytes make an HS256 key.
    @Test func secretLength() throws {
        #expect(throws: JWTKeyError(message: "the secret is 31 bytes; HS256 needs at least 32")) {
            try JWTKey.hmac(secret: String(repeating: "s", count: 31))
        }
        #expect(try JWTKey.hmac(secret: String(repeating: "s", count: 32)).algorithm == .hs256)
    }

    /// An RSA public key gives RS256, a P-256 one ES256.
    @Test func algorithmFollowsKey() throws {
        #expect(try JWTKey.publicKey(pem: keys.rsaPublic).algorithm == .rs256)
        #expect(try JWTKey.publicKey(pem: keys.ecPublic).algorithm == .es256)
    }

    /// An RSA key under 2048 bits, a P-384 key and an Ed25519 key are refused, each saying why.
    @Test func unsupportedKeys() throws {
        #expect(try refusal(file: keys.rsa1024PublicFile) == "an RSA key of 1024 bits; RS256 needs at least 2048")
        #expect(try refusal(file: keys.p384PublicFile).contains("P-256"))
        #expect(try refusal(file: keys.ed25519PublicFile).contains("neither an RSA nor an EC P-256 public key"))
    }

    /// A private key, a certificate, or text that holds no PEM key are refused.
    @Test func notAPublicKey() throws {
        #expect(try refusal(file: keys.rsaPrivateFile).contains("private key"))
        #expect(try refusal(file: TestCertificates.shared.serverCertificate).contains("certificate"))
        #expect(throws: JWTKeyError.self) { try JWTKey.publicKey(pem: "") }
        #expect(throws: JWTKeyError.self) { try JWTKey.publicKey(pem: "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n") }
    }
}
