import CStreamsSSL
import Foundation

/// Tokens signed at test time with libcrypto, from JSON the test writes
/// verbatim (so it can also write what a verifier must refuse: duplicate
/// claims, odd types, any `alg`).
///
/// Signing goes through other libcrypto calls than the verifier's
/// (`HMAC()` one-shot, `EVP_DigestSign`, DER → `r‖s` with `d2i_ECDSA_SIG`),
/// so a test is not the code checking itself.
public enum TestTokens {
    /// How a token is signed.
    public enum Signer: Sendable {
        /// HMAC-SHA256 with this secret.
        case hmac([UInt8])
        /// RS256 or ES256 with this private key PEM (the algorithm follows the key).
        case privateKey(String)
        /// An empty signature, as `alg: none` tokens carry.
        case unsigned
    }

    /// `base64url(header).base64url(claims).base64url(signature)`.
    public static func make(header: String, claims: String, signer: Signer) -> String {
        let input = base64URL(Array(header.utf8)) + "." + base64URL(Array(claims.utf8))
        return input + "." + base64URL(signature(of: Array(input.utf8), signer: signer))
    }

    /// A token with the usual header for `signer` (`{"alg":"…","typ":"JWT"}`).
    public static func make(claims: String, signer: Signer) -> String {
        make(header: "{\"alg\":\"\(algorithm(of: signer))\",\"typ\":\"JWT\"}", claims: claims, signer: signer)
    }

    /// The `alg` a signer's tokens state.
    public static func algorithm(of signer: Signer) -> String {
        switch signer {
        case .hmac: return "HS256"
        case .unsigned: return "none"
        case .privateKey(let pem): return pem.contains("EC PRIVATE") || isEC(pem) ? "ES256" : "RS256"
        }
    }

    /// Claims JSON for the common case: `sse` rights, optional `exp`, `nbf`, `aud` (raw JSON).
    public static func claims(subscribe: [String] = [], publish: [String] = [], exp: Double? = nil,
                              nbf: Double? = nil, audJSON: String? = nil) -> String {
        func list(_ patterns: [String]) -> String { "[" + patterns.map { "\"\($0)\"" }.joined(separator: ",") + "]" }
        var members = ["\"sse\":{\"subscribe\":\(list(subscribe)),\"publish\":\(list(publish))}"]
        if let exp { members.append("\"exp\":\(Int64(exp))") }
        if let nbf { members.append("\"nbf\":\(Int64(nbf))") }
        if let audJSON { members.append("\"aud\":\(audJSON)") }
        return "{" + members.joined(separator: ",") + "}"
    }

    /// Seconds since the epoch, now.
    public static var now: Double { Date().timeIntervalSince1970 }

    public static func base64URL(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    private static func signature(of input: [UInt8], signer: Signer) -> [UInt8] {
        switch signer {
        case .unsigned:
            return []
        case .hmac(let secret):
            var mac = [UInt8](repeating: 0, count: 32)
            var length: UInt32 = 0
            _ = secret.withUnsafeBytes { key in
                HMAC(EVP_sha256(), key.baseAddress, Int32(key.count), input, input.count, &mac, &length)
            }
            precondition(length == 32, "HMAC failed")
            return mac
        case .privateKey(let pem):
            let key = pem.withCString { cstreams_read_private_key_pem($0, strlen($0)) }
            guard let key else { preconditionFailure("not a private key PEM") }
            defer { EVP_PKEY_free(key) }
            let context = EVP_MD_CTX_new()
            defer { EVP_MD_CTX_free(context) }
            precondition(EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1)
            var length = 0
            precondition(EVP_DigestSign(context, nil, &length, input, input.count) == 1)
            var signature = [UInt8](repeating: 0, count: length)
            precondition(EVP_DigestSign(context, &signature, &length, input, input.count) == 1)
            signature.removeLast(signature.count - length)
            return EVP_PKEY_get_base_id(key) == EVP_PKEY_EC ? raw(fromDER: signature) : signature
        }
    }

    /// A DER ECDSA-Sig-Value as JWS's fixed 32 + 32 bytes.
    public static func raw(fromDER der: [UInt8]) -> [UInt8] {
        der.withUnsafeBufferPointer { buffer in
            var pointer: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let signature = d2i_ECDSA_SIG(nil, &pointer, buffer.count) else { preconditionFailure("bad DER") }
            defer { ECDSA_SIG_free(signature) }
            var out = [UInt8](repeating: 0, count: 64)
            out.withUnsafeMutableBufferPointer { raw in
                _ = BN_bn2binpad(ECDSA_SIG_get0_r(signature), raw.baseAddress, 32)
                _ = BN_bn2binpad(ECDSA_SIG_get0_s(signature), raw.baseAddress! + 32, 32)
            }
            return out
        }
    }

    private static func isEC(_ pem: String) -> Bool {
        let key = pem.withCString { cstreams_read_private_key_pem($0, strlen($0)) }
        defer { EVP_PKEY_free(key) }
        return key.map { EVP_PKEY_get_base_id($0) == EVP_PKEY_EC } ?? false
    }
}
