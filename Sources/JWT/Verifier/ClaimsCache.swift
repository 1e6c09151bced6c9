import CStreamsSSL
import Locking

/// Tokens verified recently, keyed by their signed part (`header.payload`),
/// so a token used again — a publisher sends the same one with every request
/// until it expires — is neither parsed nor put through libcrypto again.
///
/// Promises: an entry holds what verifying a token gave: its signed part
/// names the key's algorithm, `signature` verified over it with the key, and
/// `claims` were read from its payload. A token counts as verified by the
/// cache only when its signature is byte for byte the entry's, compared in
/// constant time (`CRYPTO_memcmp`); the lookup compares only the signed part,
/// which is no secret (anyone holding a token can read it), never the
/// signature. Only verified tokens are added, so a client cannot fill the
/// cache without valid tokens. At most `capacity` entries with signed parts
/// of at most `maximumKeyBytes` (≤ 1 MiB); when full, an arbitrary entry
/// makes room. Time and audience rules are not cached: the caller checks them
/// on every use.
final class ClaimsCache: Sendable {
    static let capacity = 512
    static let maximumKeyBytes = 2048

    struct Entry: Sendable {
        let signature: [UInt8]
        let claims: TokenClaims
    }

    private let entries = Locked<[SignedPart: Entry]>([:])

    /// The claims of a token with this signed part and exactly this signature, if verified before.
    func claims(signedPart: ArraySlice<UInt8>, signature: [UInt8]) -> TokenClaims? {
        guard signedPart.count <= Self.maximumKeyBytes else { return nil }
        let key = SignedPart(signedPart)
        guard let entry = entries.withLock({ $0[key] }), entry.signature.count == signature.count else { return nil }
        let same = entry.signature.withUnsafeBytes { known in
            signature.withUnsafeBytes { CRYPTO_memcmp(known.baseAddress, $0.baseAddress, known.count) == 0 }
        }
        return same ? entry.claims : nil
    }

    /// Remembers a token whose `signature` verified over `signedPart` and whose payload gave `claims`.
    func add(signedPart: ArraySlice<UInt8>, signature: [UInt8], claims: TokenClaims) {
        guard signedPart.count <= Self.maximumKeyBytes, !signature.isEmpty else { return }
        let key = SignedPart(signedPart)
        let entry = Entry(signature: signature, claims: claims)
        entries.withLock { entries in
            if entries.count >= Self.capacity, entries[key] == nil {
                entries.remove(at: entries.startIndex)
            }
            entries[key] = entry
        }
    }
}

/// A token's `header.payload` bytes, hashed in one call rather than byte by byte.
struct SignedPart: Hashable, Sendable {
    let bytes: [UInt8]

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = Array(bytes)
    }

    func hash(into hasher: inout Hasher) {
        bytes.withUnsafeBytes { hasher.combine(bytes: $0) }
    }
}
