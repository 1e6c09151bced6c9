/// The configured publish token (`--publish-token`), compared in constant time.
///
/// Promises (API.md, "Publishing"): a POST is authorized only by
/// `Authorization: Bearer <token>` (the scheme in any letter case); the comparison
/// takes the same time wherever the first difference is (length aside). Tokens
/// (JWTs) are checked beside it: `RequestToken`, `AccessControl`.
public struct PublishToken: Sendable {
    let bytes: [UInt8]

    public init(_ token: String) {
        bytes = Array(token.utf8)
    }

    /// True when `authorization` is `Bearer <token>`.
    public func authorizes(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let prefix = "bearer "
        guard authorization.utf8.count > prefix.utf8.count,
              authorization.prefix(prefix.count).lowercased() == prefix else { return false }
        let given = Array(authorization.utf8.dropFirst(prefix.utf8.count))
        var difference = UInt8(given.count == bytes.count ? 0 : 1)
        for index in 0..<bytes.count {
            difference |= bytes[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}
