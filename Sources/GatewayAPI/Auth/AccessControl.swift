import HTTPCore
import JWT

/// Whether subscribing needs a token (`--subscribe-auth`).
public enum SubscribeAuth: String, Sendable, Equatable, CaseIterable {
    /// Anyone may subscribe (the default).
    case open
    /// Every subscription needs a token that grants each of its topics.
    case token
}

/// Who may subscribe and publish (API.md, "Publishing" and "Tokens (JWT)"):
/// the one check every subscription and publish passes before anything is
/// subscribed or published.
///
/// Promises:
/// - subscribing: with `SubscribeAuth.token`, the request's token
///   (`RequestToken`) must verify and grant every topic; otherwise anyone may;
/// - publishing: with a JWT key, the request's token must verify and grant the
///   topic, or `Authorization` must carry the `--publish-token` bearer when one
///   is configured; with only `--publish-token`, that bearer is required;
///   with neither, anyone may;
/// - a refusal is `401` (`WWW-Authenticate: Bearer`, or `Bearer
///   error="invalid_token"`) or `403` naming the topic, and is counted in
///   `failures` under its reason.
public struct AccessControl: Sendable {
    let verifier: JWTVerifier?
    let subscribeAuth: SubscribeAuth
    let publishToken: PublishToken?
    /// Refusals so far, by reason (`sse_gateway_auth_failures_total`).
    public let failures: AuthFailures

    /// `subscribeAuth` `.token` needs a `verifier` (the configuration refuses
    /// to start without one).
    public init(verifier: JWTVerifier?, subscribeAuth: SubscribeAuth = .open, publishToken: PublishToken? = nil,
                failures: AuthFailures = AuthFailures()) {
        precondition(subscribeAuth == .open || verifier != nil, "--subscribe-auth token needs a JWT key")
        self.verifier = verifier
        self.subscribeAuth = subscribeAuth
        self.publishToken = publishToken
        self.failures = failures
    }

    /// What an accepted request may keep: when its token stops being accepted
    /// (seconds since the epoch), so a stream opened with it ends then; nil
    /// when no token was needed or it has no `exp`.
    public struct Grant: Sendable, Equatable {
        public let acceptedUntil: Double?

        public static let open = Grant(acceptedUntil: nil)
    }

    /// May `head` subscribe to every one of `topics`?
    public func subscribe(_ head: HTTPRequestHead, topics: [String]) -> Result<Grant, Refusal> {
        guard subscribeAuth == .token, let verifier else { return .success(.open) }
        return decide(verifier.authorize(RequestToken.find(in: head), .subscribe, topics: topics))
    }

    /// May `head` publish to `topic`?
    public func publish(_ head: HTTPRequestHead, topic: String) -> Result<Grant, Refusal> {
        // Open publishing reads no header (a field lookup per publish, issue 27).
        guard publishToken != nil || verifier != nil else { return .success(.open) }
        let authorization = head.headers["Authorization"]
        if let publishToken, publishToken.authorizes(authorization) { return .success(.open) }
        if let verifier {
            return decide(verifier.authorize(RequestToken.find(in: head), .publish, topics: [topic]))
        }
        // Only the shared publish token is configured, and it did not match.
        failures.record(authorization == nil ? "missing" : "invalid")
        return .failure(Refusal(status: .unauthorized, reason: "missing or wrong publish token",
                                headers: ["WWW-Authenticate": "Bearer"]))
    }

    private func decide(_ result: Result<VerifiedToken, TokenRefusal>) -> Result<Grant, Refusal> {
        switch result {
        case .success(let token):
            return .success(Grant(acceptedUntil: token.acceptedUntil))
        case .failure(let refusal):
            failures.record(refusal.metricReason)
            let status = refusal.status == 403 ? HTTPStatus(code: 403, reason: "Forbidden") : .unauthorized
            let reason = refusal == .missing
                ? "a token is required: send it as Authorization: Bearer <token>, ?access_token=<token> "
                    + "or the sse_token cookie"
                : refusal.reason
            return .failure(Refusal(status: status, reason: reason, headers: ["WWW-Authenticate": refusal.wwwAuthenticate]))
        }
    }
}
