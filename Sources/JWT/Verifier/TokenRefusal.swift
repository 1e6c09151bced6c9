/// Why a request's token does not let it do what it asks, with the answer the
/// contract gives for it (API.md, "Tokens (JWT)"): the status, the
/// `WWW-Authenticate` value, the `reason` label of
/// `sse_gateway_auth_failures_total`, and a one-line body.
public enum TokenRefusal: Error, Equatable, Sendable {
    /// No token where one is needed.
    case missing
    /// A token that is not valid (see `TokenProblem`).
    case invalid(TokenProblem)
    /// A valid token that does not grant `action` on `topic`.
    case forbidden(action: TopicAction, topic: String)

    /// `401` for a missing or invalid token, `403` for a valid one that does not grant the topic.
    public var status: Int {
        switch self {
        case .missing, .invalid: return 401
        case .forbidden: return 403
        }
    }

    /// The `WWW-Authenticate` header's value (RFC 6750 §3): `Bearer` when no
    /// token came, `Bearer error="invalid_token"` for a bad one, and
    /// `Bearer error="insufficient_scope"` beside a `403`.
    public var wwwAuthenticate: String {
        switch self {
        case .missing: return "Bearer"
        case .invalid: return "Bearer error=\"invalid_token\""
        case .forbidden: return "Bearer error=\"insufficient_scope\""
        }
    }

    /// The `reason` label: `missing`, `invalid`, `expired` or `forbidden`.
    public var metricReason: String {
        switch self {
        case .missing: return "missing"
        case .invalid(.expired): return "expired"
        case .invalid: return "invalid"
        case .forbidden: return "forbidden"
        }
    }

    /// Every value `metricReason` takes, in the order metrics list them.
    public static let metricReasons = ["missing", "invalid", "expired", "forbidden"]

    /// One line for the answer's body; a forbidden topic is named (topics are
    /// validated names, safe to echo).
    public var reason: String {
        switch self {
        case .missing: return "a token is required"
        case .invalid(let problem): return problem.reason
        case .forbidden(let action, let topic):
            return "the token does not grant \(action == .subscribe ? "subscribing to" : "publishing to") topic '\(topic)'"
        }
    }
}
