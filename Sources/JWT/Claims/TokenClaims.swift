/// The claims of a token this gateway reads, checked for type; every other
/// claim (`iss`, `sub`, `iat`, `jti`, private ones) is ignored.
///
/// Promises: a value exists only when `exp` and `nbf` are numbers if present
/// (RFC 7519 NumericDate: seconds since the epoch, fractions allowed); `aud` is
/// a string or an array of strings if present; `sse` is an object if present,
/// whose `subscribe` and `publish` are arrays of valid `TopicPattern`s if
/// present. A claim of another type makes the token malformed rather than
/// ignored: it was signed that way, and guessing would grant or refuse by accident.
public struct TokenClaims: Sendable, Equatable {
    /// `exp`, seconds since the epoch.
    public let expiresAt: Double?
    /// `nbf`, seconds since the epoch.
    public let notBefore: Double?
    /// `aud`, a lone string read as a one-element list.
    public let audience: [String]?
    /// What `sse` grants.
    public let grants: Grants

    public init(expiresAt: Double? = nil, notBefore: Double? = nil, audience: [String]? = nil, grants: Grants = Grants()) {
        self.expiresAt = expiresAt
        self.notBefore = notBefore
        self.audience = audience
        self.grants = grants
    }

    /// Reads the claims set `payload` (the decoded JWS payload).
    public static func read(_ payload: [UInt8]) -> Result<TokenClaims, TokenProblem> {
        let object: JSONObject
        do {
            object = try JSONReader.parseObject(payload)
        } catch {
            return .failure(.malformed("the claims are not a JSON object (at byte \(error.offset): expected \(error.problem))"))
        }
        return read(object)
    }

    /// Reads the claims of an already parsed claims set.
    public static func read(_ object: JSONObject) -> Result<TokenClaims, TokenProblem> {
        func numericDate(_ name: String) -> Result<Double?, TokenProblem> {
            switch object[name] {
            case nil: return .success(nil)
            case .number(let seconds)?: return .success(seconds)
            case _?: return .failure(.malformed("the \"\(name)\" claim is not a number of seconds"))
            }
        }
        let expiresAt: Double?, notBefore: Double?
        switch numericDate("exp") {
        case .success(let value): expiresAt = value
        case .failure(let problem): return .failure(problem)
        }
        switch numericDate("nbf") {
        case .success(let value): notBefore = value
        case .failure(let problem): return .failure(problem)
        }

        var audience: [String]?
        switch object["aud"] {
        case nil: audience = nil
        case .string(let one)?: audience = [one]
        case .array(let many)?:
            audience = []
            for element in many {
                guard case .string(let one) = element else {
                    return .failure(.malformed("the \"aud\" claim is not a string or an array of strings"))
                }
                audience?.append(one)
            }
        case _?: return .failure(.malformed("the \"aud\" claim is not a string or an array of strings"))
        }

        var subscribe: [TopicPattern] = [], publish: [TopicPattern] = []
        switch object["sse"] {
        case nil: break
        case .object(let sse)?:
            switch (patterns(sse, "subscribe"), patterns(sse, "publish")) {
            case (.success(let s), .success(let p)): (subscribe, publish) = (s, p)
            case (.failure(let problem), _), (_, .failure(let problem)): return .failure(problem)
            }
        case _?: return .failure(.malformed("the \"sse\" claim is not an object"))
        }
        return .success(TokenClaims(expiresAt: expiresAt, notBefore: notBefore, audience: audience,
                                    grants: Grants(subscribe: subscribe, publish: publish)))
    }

    private static func patterns(_ sse: JSONObject, _ name: String) -> Result<[TopicPattern], TokenProblem> {
        guard let value = sse[name] else { return .success([]) }
        guard case .array(let elements) = value else {
            return .failure(.malformed("\"sse.\(name)\" is not an array of topic patterns"))
        }
        var patterns: [TopicPattern] = []
        for element in elements {
            guard case .string(let text) = element, let pattern = TopicPattern(text) else {
                return .failure(.malformed("\"sse.\(name)\" holds something that is not a topic, prefix/* or *"))
            }
            patterns.append(pattern)
        }
        return .success(patterns)
    }
}
