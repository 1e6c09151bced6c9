import JWT
import Synchronization

/// `sse_gateway_auth_failures_total{reason}`: requests refused for their
/// token, by reason (`missing`, `invalid`, `expired`, `forbidden`). Lock-free,
/// shared by every connection.
public final class AuthFailures: Sendable {
    private let missing = Atomic<UInt64>(0)
    private let invalid = Atomic<UInt64>(0)
    private let expired = Atomic<UInt64>(0)
    private let forbidden = Atomic<UInt64>(0)

    public init() {}

    /// Every reason, in the order metrics list them.
    public static let reasons = TokenRefusal.metricReasons

    /// Counts one refusal for `reason` (one of `reasons`; anything else counts as `invalid`).
    public func record(_ reason: String) {
        switch reason {
        case "missing": missing.add(1, ordering: .relaxed)
        case "expired": expired.add(1, ordering: .relaxed)
        case "forbidden": forbidden.add(1, ordering: .relaxed)
        default: invalid.add(1, ordering: .relaxed)
        }
    }

    /// Refusals so far for `reason`.
    public func count(_ reason: String) -> UInt64 {
        switch reason {
        case "missing": return missing.load(ordering: .relaxed)
        case "expired": return expired.load(ordering: .relaxed)
        case "forbidden": return forbidden.load(ordering: .relaxed)
        default: return invalid.load(ordering: .relaxed)
        }
    }
}
