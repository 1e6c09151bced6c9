/// Why a Redis connection closed, as its `onClose` handlers are told: the log and
/// `/readyz` say it, so that an operator can tell a Redis that went away from a
/// reply that was late.
public enum RedisConnectionEnd: Sendable, Equatable, CustomStringConvertible {
    /// Its owner closed it (`close()`, or the last reference was dropped).
    case closedHere
    /// A reply did not come within its command's timeout (a FIFO pipeline cannot
    /// skip a reply, so the connection goes).
    case replyLate
    /// Redis ended it: a restart, a `CLIENT KILL` (Sentinel sends one to a node it
    /// reconfigures), its own `timeout`, an output buffer over its limit.
    case endedByRedis
    /// Reading or writing the socket failed (e.g. a reset).
    case socketFailed
    /// Redis sent bytes that are not RESP.
    case unreadable(String)

    public var description: String {
        switch self {
        case .closedHere: return "closed by this gateway"
        case .replyLate: return "a reply came later than the command timeout"
        case .endedByRedis: return "Redis closed it"
        case .socketFailed: return "the socket failed"
        case .unreadable(let reason): return "an unreadable reply (\(reason))"
        }
    }
}
