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
    /// A new link is up, but no probe sent through it has come back yet: whether its
    /// pub/sub delivers is not known.
    case probePending
    /// The engine was shut down.
    case shutDown

    var text: String {
        switch self {
        case .unreachable(let reason): "the cluster's Redis is unreachable (\(reason))"
        case .noMaster(let reason): "no Redis master is known (\(reason))"
        case .probeLost: "this gateway's Redis pub/sub stopped delivering (its probe did not come back); reconnecting"
        case .probePending: "this gateway's Redis link is new and its pub/sub probe has not come back yet"
        case .shutDown: "the gateway is shutting down"
        }
    }
}

/// What `/readyz` reads without a hop to the engine: the link's state as the engine
/// last set it, and the pause after a Redis that may have lost data (empty restart
/// or failover) while the gateways restore the ids.
///
/// Promises: ready only while a link of the current generation is up, a probe sent
/// through it has come back (its pub/sub delivers), no connection of it has been seen
/// closing, and no pause is running; `reason` is nil exactly when ready. A refused
/// publish's own reason is not kept here: it travels with its error
/// (`PublishError.unavailable`), so concurrent refusals cannot swap reasons.
/// Only plain values under the lock: nothing is resumed or called out while it is held.
final class Readiness: Sendable {
    private struct State {
        /// The generation of the link in use (0: none).
        var generation: UInt64 = 0
        var notReady: NotReady? = .unreachable("connecting")
        var pausedUntil: ContinuousClock.Instant?
    }

    private let state = Mutex(State())

    /// A link of `generation` is up: ready once a probe sent through it comes back.
    func up(generation: UInt64) {
        state.withLock {
            guard $0.notReady != .shutDown else { return }
            $0 = State(generation: generation, notReady: .probePending, pausedUntil: $0.pausedUntil)
        }
    }

    /// A probe came back through the pub/sub of link `generation`: it delivers.
    func probeReturned(generation: UInt64) {
        state.withLock {
            if $0.generation == generation, $0.notReady == .probePending { $0.notReady = nil }
        }
    }

    /// Not ready for `reason` (the link is gone, or going).
    func down(_ reason: NotReady) {
        state.withLock {
            $0.generation = 0
            // The first cause stays: "probe lost" is not overwritten by the reconnect's "connecting".
            if $0.notReady == nil || $0.notReady == .probePending || reason == .shutDown { $0.notReady = reason }
        }
    }

    /// Reconnecting failed for `reason`: say so from now on.
    func stillDown(_ reason: NotReady) {
        state.withLock { if $0.notReady != .shutDown { $0.notReady = reason } }
    }

    /// A connection of link `generation` closed: not ready from now on (the monitor then relinks).
    func connectionClosed(generation: UInt64) {
        state.withLock {
            if $0.generation == generation, $0.notReady == nil || $0.notReady == .probePending {
                $0.notReady = .unreachable("a connection to Redis closed")
            }
        }
    }

    /// Publishes pause until `deadline` (ids being restored after a Redis lost data).
    func pause(until deadline: ContinuousClock.Instant) {
        state.withLock { $0.pausedUntil = max($0.pausedUntil ?? deadline, deadline) }
    }

    var isReady: Bool { reason == nil }

    /// Whether a link is up and none of its connections was seen closing (pause or
    /// pending probe or not).
    var isLinkUp: Bool {
        state.withLock { ($0.notReady == nil || $0.notReady == .probePending) && $0.generation != 0 }
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

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
