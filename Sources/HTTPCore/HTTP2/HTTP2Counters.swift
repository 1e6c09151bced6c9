import Locking
import Synchronization

/// HTTP/2's share of a server's counters: connections speaking HTTP/2 now and
/// their open streams now (atomics, read without locks), and the `GOAWAY`s sent
/// by reason (rare: a small lock).
public final class HTTP2Counters: Sendable {
    /// Connections speaking HTTP/2 now (included in `ConnectionCounters.open`).
    public let connections = Atomic<Int>(0)
    /// Streams open now, across every HTTP/2 connection.
    public let streams = Atomic<Int>(0)
    private let goAwaysSent = Locked([HTTP2GoAwayReason: UInt64]())

    public init() {}

    /// `GOAWAY`s sent for `reason` since start.
    public func goAways(_ reason: HTTP2GoAwayReason) -> UInt64 {
        goAwaysSent.withLock { $0[reason] ?? 0 }
    }

    func countGoAway(_ reason: HTTP2GoAwayReason) {
        goAwaysSent.withLock { $0[reason, default: 0] += 1 }
    }
}
