/// Why a token is not valid, whatever it is used for: each case is a `401`
/// with `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750 §3.1).
///
/// Reasons are words for the one-line answer body; they never quote the token
/// or any other text of the client's.
public enum TokenProblem: Error, Equatable, Sendable {
    /// Not three canonical base64url parts, a header or claims that break the
    /// JSON rules, or a claim of the wrong type; the text says which.
    case malformed(String)
    /// The header's `alg` is not the configured key's algorithm (`none` included).
    case wrongAlgorithm(stated: String, expected: JWTAlgorithm)
    /// The signature does not verify with the configured key.
    case badSignature
    /// `exp` has passed, leeway included.
    case expired
    /// `nbf` is still ahead, leeway included.
    case notYetValid
    /// An audience is configured and `aud` does not contain it.
    case wrongAudience

    /// One line for the `401` body.
    public var reason: String {
        switch self {
        case .malformed(let detail): return "invalid token: \(detail)"
        case .wrongAlgorithm(_, let expected):
            // The stated `alg` is the client's text: not echoed.
            return "invalid token: its alg is not \(expected.rawValue), the only algorithm this gateway accepts"
        case .badSignature: return "invalid token: the signature does not verify"
        case .expired: return "invalid token: the token has expired"
        case .notYetValid: return "invalid token: the token is not valid yet (nbf)"
        case .wrongAudience: return "invalid token: the token is for another audience"
        }
    }
}

/// A signing algorithm this verifier knows. Which one applies follows from the
/// configured key alone, never from a token.
public enum JWTAlgorithm: String, Sendable, Equatable, CaseIterable {
    /// HMAC-SHA256 with a shared secret.
    case hs256 = "HS256"
    /// RSASSA-PKCS1-v1_5 with SHA-256, an RSA public key.
    case rs256 = "RS256"
    /// ECDSA on P-256 with SHA-256, an EC public key; signatures are `r‖s`.
    case es256 = "ES256"
}
