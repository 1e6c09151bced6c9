/// A JWS in compact serialization (`header.payload.signature`), split and its
/// header read, before any signature is checked.
///
/// Promises: a value exists only for text of at most `maximumBytes` bytes with
/// exactly two dots, whose three parts are canonical base64url (`Base64URL`),
/// whose header is a JSON object (`JSONReader`'s rules: no duplicate member)
/// with a string `alg` and no `crit` (this verifier implements no extension,
/// so RFC 7515 §4.1.11 says to refuse any). The payload is decoded but not
/// read: its JSON is parsed only after the signature over `signingInput` verified.
public struct CompactToken: Sendable {
    /// The longest token accepted, in bytes: far above any sensible set of
    /// claims, and below the gateway's header limit.
    public static let maximumBytes = 8192

    /// The header's `alg`, as the token states it (never used to pick a key).
    public let algorithm: String
    /// The decoded header.
    public let header: JSONObject
    /// `base64url(header) "." base64url(payload)`: the bytes that were signed.
    public let signingInput: ArraySlice<UInt8>
    /// The payload's bytes, not yet read as JSON.
    public let payload: [UInt8]
    /// The decoded signature.
    public let signature: [UInt8]

    /// Splits and checks `text`; the error says which rule broke, in words fit
    /// for a `401` reason (they never quote the token).
    public static func parse(_ text: [UInt8]) -> Result<CompactToken, TokenProblem> {
        guard !text.isEmpty else { return .failure(.malformed("the token is empty")) }
        guard text.count <= maximumBytes else { return .failure(.malformed("the token is longer than \(maximumBytes) bytes")) }
        var dots: [Int] = []
        for (offset, byte) in text.enumerated() where byte == UInt8(ascii: ".") {
            dots.append(offset)
            if dots.count > 2 { break }
        }
        guard dots.count == 2 else {
            return .failure(.malformed("a token has three base64url parts separated by '.'"))
        }
        let headerPart = text[..<dots[0]]
        let payloadPart = text[(dots[0] + 1)..<dots[1]]
        let signaturePart = text[(dots[1] + 1)...]

        guard let headerBytes = Base64URL.decode(headerPart) else {
            return .failure(.malformed("the header is not base64url without padding"))
        }
        let header: JSONObject
        do {
            header = try JSONReader.parseObject(headerBytes)
        } catch {
            return .failure(.malformed("the header is not a JSON object (at byte \(error.offset): expected \(error.problem))"))
        }
        guard case .string(let algorithm)? = header["alg"] else {
            return .failure(.malformed("the header has no \"alg\" string"))
        }
        if header["crit"] != nil {
            return .failure(.malformed("the header names critical extensions (\"crit\"), which are not supported"))
        }
        // Decoded now, though read later, so a token is refused the same way
        // whatever its signature.
        guard let payload = Base64URL.decode(payloadPart) else {
            return .failure(.malformed("the payload is not base64url without padding"))
        }
        guard let signature = Base64URL.decode(signaturePart) else {
            return .failure(.malformed("the signature is not base64url without padding"))
        }
        return .success(CompactToken(algorithm: algorithm, header: header, signingInput: text[..<dots[1]],
                                     payload: payload, signature: signature))
    }
}
