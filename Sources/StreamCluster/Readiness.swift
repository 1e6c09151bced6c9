import Synchronization

/// Why the cluster engine cannot serve a publish or a new subscription right now
/// (`/readyz`'s 503 and a refused publish say which).
enum NotReady: Error, Sendable, Equatable {
    /// Connecting, or the connection was lost (the reason from the last attempt).
    case unreachable(String)
    /// Sentinel mode: no sentinel names a master, or the one named is not (yet) master.
    case noMaster(String)
    /// This gateway's probe through pub/sub did not come back: its subscriptions may not deliver.
    case probeLost
    /// The engine was shut down.
    case shutDown

    var text: String {
        switch self {
        case .unreachable(let reason): "the cluster's Redis is unreachable (\(reason))"
        case .noMaster(let reason): "no Redis master is known (\(reason))"
        case .probeLost: "this gateway's Redis pub/sub stopped delivering (its probe did not come back); reconnecting"
        case .shutDown: "the gateway is shutting down"
        }
    }
}

/// What `/readyz` reads without a hop to the engine: the link's state as the engine
/// last set it, and the pause after a Redis that may have lost data (empty restart
/// or failover) while the gateways restore the ids.
///
/// Promises: ready only while a link of the current generation is up, no connection of
/// it has been seen closing, and no pause is running; `reason` is nil exactly when ready.
/// Only plain values under the lock: nothing is resumed or called out while it is held.
final class Readiness: Sendable {
    private struct State {
        /// The generation of the link in use (0: none).
        var generation: UInt64 = 0
        var notReady: NotReady? = .unreachable("connecting")
        var pausedUntil: ContinuousClock.Instant?
        /// A publish's own reason for its last refusal while the link was up (e.g. too few replicas).
        var lastRefusal: String?
    }

    private let state = Mutex(State())

    /// A link of `generation` is up.
    func up(generation: UInt64) {
        state.withLock { $0 = State(generation: generation, notReady: nil, pausedUntil: $0.pausedUntil) }
    }

    /// Not ready for `reason` (the link is gone, or going).
    func down(_ reason: NotReady) {
        state.withLock {
            $0.generation = 0
            // The first cause stays: "probe lost" is not overwritten by the reconnect's "connecting".
            if $0.notReady == nil || reason == .shutDown { $0.notReady = reason }
        }
    }

    /// Reconnecting failed for `reason`: say so from now on.
    func stillDown(_ reason: NotReady) {
        state.withLock { if $0.notReady != .shutDown { $0.notReady = reason } }
    }

    /// A connection of link `generation` closed: not ready from now on (the monitor then relinks).
    func connectionClosed(generation: UInt64) {
        state.withLock {
            if $0.generation == generation, $0.notReady == nil {
                $0.notReady = .unreachable("a connection to Redis closed")
            }
        }
    }

    /// Publishes pause until `deadline` (ids being restored after a Redis lost data).
    func pause(until deadline: ContinuousClock.Instant) {
        state.withLock { $0.pausedUntil = max($0.pausedUntil ?? deadline, deadline) }
    }

    func refused(_ reason: String?) {
        state.withLock { $0.lastRefusal = reason }
    }

    var isReady: Bool { reason == nil }

    /// Whether a link is up and none of its connections was seen closing (pause or not).
    var isLinkUp: Bool {
        state.withLock { $0.notReady == nil && $0.generation != 0 }
    }

    /// Why not ready, in a sentence; nil when ready.
    var reason: String? {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let notReady = state.notReady { return notReady.text }
            if let until = state.pausedUntil, until > now {
                return "the cluster's Redis may have lost data (it restarted empty or failed over): "
                    + "the gateways restore the ids for \(Self.milliseconds(until - now)) ms more"
            }
            return nil
        }
    }

    /// Why the last publish was refused: the reason not to be ready, else its own.
    var refusal: String? {
        reason ?? state.withLock { $0.lastRefusal }
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
