import CStreamsSSL

/// The libcrypto objects behind a `JWTKey`, freed with it.
///
/// `@unchecked Sendable`: both objects are written once, here, before the key
/// is shared, and only read afterwards. An `EVP_PKEY` may be used by several
/// threads at once for verification (OpenSSL 3 threading rules), and the HMAC
/// context is a template that each verification copies, never changes.
final class KeyMaterial: @unchecked Sendable {
    private let hmac: OpaquePointer?
    private let publicKey: OpaquePointer?

    init(hmac context: OpaquePointer) {
        hmac = context
        publicKey = nil
    }

    init(publicKey key: OpaquePointer) {
        hmac = nil
        publicKey = key
    }

    deinit {
        if let hmac { EVP_MAC_CTX_free(hmac) }
        if let publicKey { EVP_PKEY_free(publicKey) }
    }

    /// HMAC-SHA256 of `input` compared with `signature` in constant time
    /// (`CRYPTO_memcmp`); the length, which is no secret, is checked first.
    func verifyHMAC(_ signature: [UInt8], over input: ArraySlice<UInt8>) -> Bool {
        guard let hmac, signature.count == 32 else { return false }
        var mac = [UInt8](repeating: 0, count: 32)
        let computed = input.withUnsafeBufferPointer { data in
            mac.withUnsafeMutableBufferPointer { cstreams_hmac_sha256(hmac, data.baseAddress, data.count, $0.baseAddress) }
        }
        guard computed == 1 else { return false }
        return signature.withUnsafeBytes { given in
            mac.withUnsafeBytes { CRYPTO_memcmp(given.baseAddress, $0.baseAddress, 32) == 0 }
        }
    }

    /// `EVP_DigestVerify` with SHA-256: RSASSA-PKCS1-v1_5 for an RSA key,
    /// ECDSA (DER signature) for an EC key.
    func verifyDigestSignature(_ signature: [UInt8], over input: ArraySlice<UInt8>) -> Bool {
        guard let publicKey, !signature.isEmpty else { return false }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, publicKey) == 1 else { return false }
        return signature.withUnsafeBufferPointer { signed in
            input.withUnsafeBufferPointer { data in
                EVP_DigestVerify(context, signed.baseAddress, signed.count, data.baseAddress, data.count) == 1
            }
        }
    }
}

/// ECDSA signatures between JWS's fixed-size `r‖s` and the DER libcrypto reads.
enum ECDSASignature {
    /// The DER `ECDSA-Sig-Value` of a 64-byte P-256 `r‖s`, or nil.
    static func der(fromRaw raw: [UInt8]) -> [UInt8]? {
        guard raw.count == 64, let signature = ECDSA_SIG_new() else { return nil }
        defer { ECDSA_SIG_free(signature) }
        let (r, s) = raw.withUnsafeBufferPointer { bytes in
            (BN_bin2bn(bytes.baseAddress, 32, nil), BN_bin2bn(bytes.baseAddress! + 32, 32, nil))
        }
        guard let r, let s else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        // set0 takes ownership of both numbers on success.
        guard ECDSA_SIG_set0(signature, r, s) == 1 else {
            BN_free(r)
            BN_free(s)
            return nil
        }
        var der: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &der)
        guard length > 0, let der else { return nil }
        defer { cstreams_OPENSSL_free(der) }
        return Array(UnsafeBufferPointer(start: der, count: Int(length)))
    }
}
