import JWT

/// When a stream opened with a token ends (API.md: "An open stream ends when its
/// token expires"; the client reconnects with a fresh one).
enum TokenExpiry {
    /// `acceptedUntil` (seconds since the epoch, the token's expiry plus leeway) as
    /// an instant of the stream's clock; nil without a token.
    static func deadline(acceptedUntil: Double?) -> ContinuousClock.Instant? {
        guard let acceptedUntil else { return nil }
        let remaining = max(0, acceptedUntil - JWTVerifier.wallClock())
        return .now + .milliseconds(Int64(remaining * 1000))
    }
}
