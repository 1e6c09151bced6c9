import RedisClient
import Locking

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

/// What `/readyz` reads without a hop to the engine: each shard's link state as the
/// engine last set it, and each shard's pause after a Redis that may have lost data
/// (empty restart or failover) while the gateways restore the ids. One shard for a
/// single Redis or Sentinel (index 0, the default of every call); on Redis Cluster one
/// per master, each named by its address, plus whether a slot map was read at all.
///
/// Promises: ready only while every shard in use has a link of its current generation
/// up, a probe sent through it has come back (its pub/sub delivers), no connection of
/// it has been seen closing, no pause runs on it, and Redis took its last liveness
/// write (a Redis that refuses writes refuses publishes); `reason` is nil exactly when
/// ready, and names the shard that is not (on Redis Cluster). A refused publish's own
/// reason is not kept here: it travels with its error (`PublishError.unavailable`), so
/// concurrent refusals cannot swap reasons.
/// Only plain values under the lock: nothing is resumed or called out while it is held.
final class Readiness: Sendable {
    private struct Shard {
        /// The generation of the link in use (0: none).
        var generation: UInt64 = 0
        var notReady: NotReady? = .unreachable("connecting")
        /// A `PublishDeadline`, not an instant: `ContinuousClock.Instant` is resilient, and a
        /// `Shard` holding one had no fixed layout, so the lookup on every publish
        /// (`isReady(shard:)`) went through its value witnesses (about 900 instructions).
        var pausedUntil: PublishDeadline?
        /// How the reason names the shard (nil: the only one, not named).
        var name: String?
        /// Redis's refusal of this gateway's last liveness write (`OOM` under `maxmemory`
        /// with `noeviction`, `MISCONF` after a failed save): publishes are refused too, so
        /// `/readyz` says not ready, but the link serves new subscriptions (they only read).
        var writesRefused: String?
    }

    private struct State {
        var shards: [Int: Shard]
        /// Not ready whatever the shards say (Redis Cluster: no slot map read yet).
        var overall: NotReady?
    }

    private let state: Locked<State>

    /// `shards`: how many exist from the start (0 on Redis Cluster, added as the map names them).
    init(shards: Int = 1, overall: NotReady? = nil) {
        state = Locked(State(shards: Dictionary(uniqueKeysWithValues: (0..<shards).map { ($0, Shard()) }), overall: overall))
    }

    /// A shard joins (Redis Cluster: a master of the map), connecting.
    func add(shard: Int, name: String) {
        state.withLock { if $0.shards[shard] == nil { $0.shards[shard] = Shard(name: name) } }
    }

    /// What the reason calls the shard (its master's address).
    func name(shard: Int, _ name: String) {
        state.withLock { $0.shards[shard]?.name = name }
    }

    /// A shard no longer used (no slot served by it): it no longer counts.
    func retire(shard: Int) {
        state.withLock { _ = $0.shards.removeValue(forKey: shard) }
    }

    /// Not ready for `reason` whatever the shards say, or (nil) back to the shards' word.
    func overall(_ reason: NotReady?) {
        state.withLock { if $0.overall != .shutDown { $0.overall = reason } }
    }

    /// A link of `generation` is up: the shard is ready once a probe sent through it comes back.
    func up(shard: Int = 0, generation: UInt64) {
        state.withLock {
            guard var entry = $0.shards[shard], entry.notReady != .shutDown else { return }
            entry.generation = generation
            entry.notReady = .probePending
            // `writesRefused` stays: the new link's first liveness write, just before, set it.
            $0.shards[shard] = entry
        }
    }

    /// A probe came back through the pub/sub of the shard's link `generation`: it delivers.
    func probeReturned(shard: Int = 0, generation: UInt64) {
        state.withLock {
            guard var entry = $0.shards[shard], entry.generation == generation, entry.notReady == .probePending else { return }
            entry.notReady = nil
            $0.shards[shard] = entry
        }
    }

    /// Not ready for `reason` (the link is gone, or going); `.shutDown` for every shard.
    func down(shard: Int = 0, _ reason: NotReady) {
        state.withLock {
            if reason == .shutDown { $0.overall = .shutDown }
            guard var entry = $0.shards[shard] else { return }
            entry.generation = 0
            // The first cause stays: "probe lost" is not overwritten by the reconnect's "connecting".
            if entry.notReady == nil || entry.notReady == .probePending || reason == .shutDown { entry.notReady = reason }
            $0.shards[shard] = entry
        }
    }

    /// Reconnecting failed for `reason`: say so from now on.
    func stillDown(shard: Int = 0, _ reason: NotReady) {
        state.withLock { if $0.shards[shard]?.notReady != .shutDown { $0.shards[shard]?.notReady = reason } }
    }

    /// A connection of link `generation` closed `because`: not ready from now on (the monitor
    /// then relinks). Whether that took a shard down (false: the link was gone already).
    func connectionClosed(generation: UInt64, because end: RedisConnectionEnd) -> Bool {
        state.withLock {
            guard $0.overall != .shutDown else { return false }
            var tookDown = false
            for (index, entry) in $0.shards
            where entry.generation == generation && (entry.notReady == nil || entry.notReady == .probePending) {
                $0.shards[index]?.notReady = .unreachable("a connection to Redis closed: \(end)")
                tookDown = true
            }
            return tookDown
        }
    }

    /// Publishes on the shard pause until `deadline` (ids being restored after a Redis lost data).
    func pause(shard: Int = 0, until deadline: ContinuousClock.Instant) {
        state.withLock {
            guard var entry = $0.shards[shard] else { return }
            let until = PublishDeadline(deadline)
            entry.pausedUntil = max(entry.pausedUntil ?? until, until)
            $0.shards[shard] = entry
        }
    }

    /// Publishes on the shard pause for at most `left` more (as Redis said just now), or (nil) not at all.
    func paused(shard: Int = 0, for left: Duration?) {
        let now = ContinuousClock.now
        let until = left.map { PublishDeadline(now + $0) }
        state.withLock { $0.shards[shard]?.pausedUntil = until }
    }

    /// Redis refused (`refusal`: its words) or took (nil) this gateway's last write on the
    /// shard. Returns the refusal noted before (nil: writes were taken).
    @discardableResult
    func writes(shard: Int = 0, refused refusal: String?) -> String? {
        state.withLock {
            let before = $0.shards[shard]?.writesRefused
            $0.shards[shard]?.writesRefused = refusal
            return before
        }
    }

    /// Whether a pause is noted for the shard (its end not passed).
    func isPaused(shard: Int = 0) -> Bool {
        state.withLock { ($0.shards[shard]?.pausedUntil).map { $0.isAhead() } ?? false }
    }

    var isReady: Bool { reason == nil }

    /// Whether every shard serves a new subscription now (`isReady(shard:)` of each): ready,
    /// or not only because Redis refuses writes.
    var servesSubscriptions: Bool {
        state.withLock { state in
            guard case .none = state.overall else { return false }
            return state.shards.values.allSatisfy { Self.serves($0) }
        }
    }

    /// Whether the shard's link serves now (no cause, no pause), without building the reason
    /// or copying the shard's entry (asked on every publish and subscription). Writes refused
    /// do not count here: a subscription is served, and a publish is tried (Redis says why
    /// it is refused, and it is stored the moment Redis takes writes again).
    func isReady(shard: Int) -> Bool {
        state.withLock { state in
            guard case .none = state.overall, let index = state.shards.index(forKey: shard) else { return false }
            return Self.serves(state.shards.values[index])
        }
    }

    /// A shard serves publishes and subscriptions: no cause, and no pause running (the
    /// clock is read only while one is set). Writes refused do not count here.
    private static func serves(_ shard: borrowing Shard) -> Bool {
        guard case .none = shard.notReady else { return false }
        guard let until = shard.pausedUntil else { return true }
        return !until.isAhead()
    }

    /// Whether every shard's link is up and none of its connections was seen closing (pause
    /// or pending probe or not).
    var isLinkUp: Bool {
        state.withLock { state in
            state.overall == nil && state.shards.values.allSatisfy {
                ($0.notReady == nil || $0.notReady == .probePending) && $0.generation != 0
            }
        }
    }

    /// Why not ready, in a sentence (the first shard that is not, by index); nil when ready.
    var reason: String? {
        state.withLock { state in
            if let overall = state.overall { return overall.text }
            for index in state.shards.keys.sorted() {
                if let text = Self.reason(state.shards[index]!) { return text }
            }
            return nil
        }
    }

    /// Why the shard cannot serve now; nil when it can.
    func reason(shard: Int) -> String? {
        state.withLock { state in
            if let overall = state.overall { return overall.text }
            guard let entry = state.shards[shard] else { return NotReady.unreachable("no link to this shard").text }
            return Self.reason(entry)
        }
    }

    /// The clock is read only while a pause is set (a vDSO call, no wait: fine under the lock).
    private static func reason(_ shard: Shard) -> String? {
        guard shard.notReady != nil || shard.pausedUntil != nil || shard.writesRefused != nil else { return nil }
        let prefix = shard.name.map { "shard \($0): " } ?? ""
        if let notReady = shard.notReady { return prefix + notReady.text }
        if let refusal = shard.writesRefused {
            return prefix + "the cluster's Redis refuses writes (\(refusal)): publishes are refused until it takes them again"
        }
        let now = ContinuousClock.now
        if let until = shard.pausedUntil?.instant, until > now {
            return prefix + "the cluster's Redis may have lost data (it restarted empty or failed over): "
                + "the gateways restore the ids (at most \(milliseconds(until - now)) ms more)"
        }
        return nil
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
