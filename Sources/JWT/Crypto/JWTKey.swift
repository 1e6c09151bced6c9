import CStreamsSSL

/// The key tokens must be signed with; it alone decides the algorithm.
///
/// Promises: an HMAC key is at least `minimumSecretBytes` long and accepts
/// HS256 only; a public key is an RSA key of at least `minimumRSABits` bits
/// (RS256) or an EC key on P-256 (ES256) — anything else is refused when the
/// key is made, not when a token arrives. A key is immutable once made and is
/// used by any number of threads at once.
public struct JWTKey: Sendable {
    /// RFC 7518 §3.2: a key at least as long as the hash output.
    public static let minimumSecretBytes = 32
    /// Below this, RSA keys are refused (NIST SP 800-131A).
    public static let minimumRSABits: Int32 = 2048

    /// The one algorithm this key verifies.
    public let algorithm: JWTAlgorithm
    let material: KeyMaterial

    /// An HS256 key from a shared secret of at least 32 bytes.
    public static func hmac(secret: [UInt8]) throws(JWTKeyError) -> JWTKey {
        guard secret.count >= minimumSecretBytes else {
            throw JWTKeyError(message: "the secret is \(secret.count) bytes; HS256 needs at least \(minimumSecretBytes)")
        }
        guard let context = secret.withUnsafeBufferPointer({ cstreams_hmac_sha256_new($0.baseAddress, $0.count) }) else {
            ERR_clear_error()
            throw JWTKeyError(message: "OpenSSL could not set up HMAC-SHA256")
        }
        return JWTKey(algorithm: .hs256, material: KeyMaterial(hmac: context))
    }

    /// An HS256 key from the secret's UTF-8 bytes.
    public static func hmac(secret: String) throws(JWTKeyError) -> JWTKey {
        try hmac(secret: Array(secret.utf8))
    }

    /// An RS256 or ES256 key from a PEM `PUBLIC KEY` block (what
    /// `openssl pkey -pubout` writes).
    public static func publicKey(pem: String) throws(JWTKeyError) -> JWTKey {
        if pem.contains("PRIVATE KEY-----") {
            throw JWTKeyError(message: "this is a private key; give its public key (openssl pkey -in key.pem -pubout)")
        }
        if pem.contains("-----BEGIN CERTIFICATE-----") {
            throw JWTKeyError(message: "this is a certificate; give its public key (openssl x509 -in cert.pem -pubkey -noout)")
        }
        let bytes = Array(pem.utf8)
        guard let key = bytes.withUnsafeBufferPointer({ buffer in
            buffer.withMemoryRebound(to: CChar.self) { cstreams_read_public_key_pem($0.baseAddress, $0.count) }
        }) else {
            ERR_clear_error()
            throw JWTKeyError(message: "no PEM public key (-----BEGIN PUBLIC KEY-----) could be read")
        }
        let material = KeyMaterial(publicKey: key)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            let bits = EVP_PKEY_get_bits(key)
            guard bits >= minimumRSABits else {
                throw JWTKeyError(message: "an RSA key of \(bits) bits; RS256 needs at least \(minimumRSABits)")
            }
            return JWTKey(algorithm: .rs256, material: material)
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1,
                  String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self) == "prime256v1"
            else {
                ERR_clear_error()
                throw JWTKeyError(message: "an EC key on another curve than P-256; ES256 needs P-256 (prime256v1)")
            }
            return JWTKey(algorithm: .es256, material: material)
        default:
            throw JWTKeyError(message: "neither an RSA nor an EC P-256 public key (RS256 and ES256 are supported)")
        }
    }

    /// Whether `signature` is this key's signature of `input`, for its own
    /// algorithm. HMACs are compared in constant time.
    func verifies(_ signature: [UInt8], over input: ArraySlice<UInt8>) -> Bool {
        let verified: Bool
        switch algorithm {
        case .hs256: verified = material.verifyHMAC(signature, over: input)
        case .rs256: verified = material.verifyDigestSignature(signature, over: input)
        case .es256:
            // JWS writes ES256 signatures as r‖s, 32 bytes each (RFC 7518 §3.4);
            // libcrypto verifies the DER ECDSA-Sig-Value.
            guard signature.count == 64, let der = ECDSASignature.der(fromRaw: signature) else { return false }
            verified = material.verifyDigestSignature(der, over: input)
        }
        // A failed verification leaves entries on this thread's error queue;
        // the TLS code reads that queue after its own calls.
        if !verified { ERR_clear_error() }
        return verified
    }
}

/// A key that cannot be used, in words for the startup error that names its flag.
public struct JWTKeyError: Error, Equatable, Sendable {
    public let message: String
}
