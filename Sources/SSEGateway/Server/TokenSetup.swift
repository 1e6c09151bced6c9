import Foundation
import GatewayAPI
import JWT

/// Turns the token options into the gateway's `AccessControl`, with the
/// startup errors the gateway promises: a public key file that is missing,
/// unreadable, or not an RSA (≥ 2048 bits) or P-256 public key stops the start
/// with a `ConfigurationError` naming the flag (exit 2), as a secret under 32
/// bytes already did when the command line was read.
enum TokenSetup {
    static func accessControl(_ configuration: GatewayConfiguration) throws(ConfigurationError) -> AccessControl {
        let publishToken = configuration.publishToken.map(PublishToken.init)
        guard let key = try key(configuration) else {
            return AccessControl(verifier: nil, publishToken: publishToken)
        }
        let verifier = JWTVerifier(key: key, audience: configuration.jwtAudience)
        return AccessControl(verifier: verifier, subscribeAuth: configuration.subscribeAuth, publishToken: publishToken)
    }

    private static func key(_ configuration: GatewayConfiguration) throws(ConfigurationError) -> JWTKey? {
        if let secret = configuration.jwtSecret {
            do {
                return try JWTKey.hmac(secret: secret)
            } catch {
                throw ConfigurationError(message: "--jwt-secret: \(error.message)")
            }
        }
        guard let path = configuration.jwtPublicKey else { return nil }
        let pem: String
        do {
            pem = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            let reason = FileManager.default.fileExists(atPath: path) ? "cannot read it as text" : "no such file"
            throw ConfigurationError(message: "--jwt-public-key: \(path): \(reason)")
        }
        do {
            return try JWTKey.publicKey(pem: pem)
        } catch {
            throw ConfigurationError(message: "--jwt-public-key: \(path): \(error.message)")
        }
    }
}
