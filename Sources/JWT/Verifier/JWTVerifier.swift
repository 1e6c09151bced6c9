import Glibc

/// Verifies tokens against the configured key, audience and clock, and
/// answers whether a token lets a request act on its topics.
///
/// Promises: a token is valid only when it parses (`CompactToken`), its `alg`
/// is exactly the key's algorithm (`none` and every other value refused,
/// before any signature work), its signature verifies with the key, its claims
/// have the right types (`TokenClaims`), `now < exp + leeway` and
/// `nbf - leeway <= now` when those claims are present, and, with an audience
/// configured, `aud` contains it. The claims are read only after the signature
/// verified. A token verified before is recognized by its bytes
/// (`ClaimsCache`: the signature compared in constant time) and not parsed or
/// verified again; the time and audience rules apply on every call. Safe from
/// any thread.
public struct JWTVerifier: Sendable {
    /// The most clock skew ever allowed between the token's issuer and the gateway.
    public static let maximumLeeway = 5.0

    public let key: JWTKey
    /// The audience `aud` must contain, or nil to leave `aud` unchecked.
    public let audience: String?
    /// Seconds of clock skew allowed on `exp` and `nbf` (0 to `maximumLeeway`).
    public let leeway: Double
    /// Seconds since the epoch, now.
    private let now: @Sendable () -> Double
    /// Tokens verified before, by their signed part.
    private let cache = ClaimsCache()

    /// `leeway` is clamped to 0...`maximumLeeway`; `now` is the wall clock
    /// unless a test injects its own.
    public init(key: JWTKey, audience: String? = nil, leeway: Double = JWTVerifier.maximumLeeway,
                now: @escaping @Sendable () -> Double = JWTVerifier.wallClock)
    {
        self.key = key
        self.audience = audience
        self.leeway = min(max(leeway, 0), Self.maximumLeeway)
        self.now = now
    }

    /// Seconds since the epoch by `CLOCK_REALTIME`, the clock `exp` is written in.
    @Sendable public static func wallClock() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    /// The token's claims when it is valid, or why it is not.
    public func verify(_ token: some StringProtocol) -> Result<VerifiedToken, TokenProblem> {
        verify(Array(token.utf8))
    }

    /// The token's claims when it is valid, or why it is not.
    public func verify(_ token: [UInt8]) -> Result<VerifiedToken, TokenProblem> {
        // A token verified before, byte for byte: what verifying it gave then.
        if let (signedPart, signaturePart) = Self.split(token), let signature = Base64URL.decode(signaturePart),
           let known = cache.claims(signedPart: signedPart, signature: signature) {
            return check(known)
        }
        let compact: CompactToken
        switch CompactToken.parse(token) {
        case .success(let parsed): compact = parsed
        case .failure(let problem): return .failure(problem)
        }
        guard compact.algorithm == key.algorithm.rawValue else {
            return .failure(.wrongAlgorithm(stated: compact.algorithm, expected: key.algorithm))
        }
        guard key.verifies(compact.signature, over: compact.signingInput) else { return .failure(.badSignature) }
        let claims: TokenClaims
        switch TokenClaims.read(compact.payload) {
        case .success(let read): claims = read
        case .failure(let problem): return .failure(problem)
        }
        cache.add(signedPart: compact.signingInput, signature: compact.signature, claims: claims)
        return check(claims)
    }

    /// The time and audience rules, which change with the clock, never cached.
    private func check(_ claims: TokenClaims) -> Result<VerifiedToken, TokenProblem> {
        let now = now()
        if let expiresAt = claims.expiresAt, now >= expiresAt + leeway { return .failure(.expired) }
        if let notBefore = claims.notBefore, now + leeway < notBefore { return .failure(.notYetValid) }
        if let audience {
            guard let stated = claims.audience, stated.contains(where: { $0.utf8.elementsEqual(audience.utf8) }) else {
                return .failure(.wrongAudience)
            }
        }
        return .success(VerifiedToken(claims: claims, acceptedUntil: claims.expiresAt.map { $0 + leeway }))
    }

    /// `header.payload` and `signature` of a token within the size limit with
    /// exactly two dots, or nil (then `CompactToken.parse` says what is wrong).
    private static func split(_ token: [UInt8]) -> (ArraySlice<UInt8>, ArraySlice<UInt8>)? {
        guard token.count <= CompactToken.maximumBytes,
              let first = token.firstIndex(of: UInt8(ascii: ".")),
              let last = token.lastIndex(of: UInt8(ascii: ".")), last != first else { return nil }
        guard !token[(first + 1)..<last].contains(UInt8(ascii: ".")) else { return nil }
        return (token[..<last], token[(last + 1)...])
    }

    /// Whether `token` (nil: the request carried none) lets the request do
    /// `action` on every one of `topics`; the refusal names the first topic
    /// not granted.
    public func authorize(_ token: String?, _ action: TopicAction, topics: [String]) -> Result<VerifiedToken, TokenRefusal> {
        guard let token else { return .failure(.missing) }
        switch verify(token) {
        case .failure(let problem):
            return .failure(.invalid(problem))
        case .success(let verified):
            if let refused = verified.claims.grants.firstRefused(action, topics: topics) {
                return .failure(.forbidden(action: action, topic: refused))
            }
            return .success(verified)
        }
    }
}

/// A token that verified: its claims, and until when the verifier accepts it.
public struct VerifiedToken: Sendable, Equatable {
    public let claims: TokenClaims
    /// Seconds since the epoch from which the verifier refuses the token as
    /// expired (`exp` plus the leeway); nil for a token without `exp`. A
    /// stream opened with the token ends then.
    public let acceptedUntil: Double?
}
