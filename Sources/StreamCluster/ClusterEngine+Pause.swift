import RedisClient
import StreamHub

/// The pause after a Redis that may have lost data, as each gateway takes part in it.
///
/// After a failover the first gateway to reach the new master starts the pause
/// (`startFailoverPause`: the shard's `refloor` = `failover`, at most
/// `failoverPause`); every gateway that links to a Redis where a pause runs owes a
/// mark: once its syncs of the shard's followed topics are done (each one's counters
/// raised to the ids it holds or acknowledged), it adds itself to the pause's raised set. The pause
/// ends the moment every gateway seen on the shard within the last minute (the
/// shard's gateways set, replicated from the old master) is marked; one that is not
/// holds it while its liveness key (3 s after its last heartbeat) is still there, and
/// in any case for `failoverPauseMinimum` (1 s) from the start, so a gateway whose
/// liveness lapsed during a long promotion but arrives soon after still raises before
/// anyone publishes. The publish script and `pauseState` decide it in Redis, so every
/// gateway sees the same answer. A gateway arriving after the pause ended starts a
/// new one that waits for its own syncs and the marks of those already there, who
/// look at the pause every 100 ms for `failoverPause` after their own failover
/// (`pauseWatchTurns`) to give them again.
/// The pause after an empty restart (`refloor` = `1`, 3 s) is not ended by marks:
/// no liveness survives an empty restart, so nobody would be known to wait for.
extension ClusterEngine {
    /// How long a gateway's liveness key lives after each heartbeat.
    static var livenessMilliseconds: Int { 3000 }
    /// How often the pause is looked at while one runs (or this gateway owes its mark).
    static var pauseWatchInterval: Duration { .milliseconds(100) }

    /// Writes this gateway's liveness on the shard (and its name in the shard's
    /// gateways set). Returns false when the key had lapsed (nil: refused). A refusal
    /// of writes as such (`OOM` under `maxmemory` with `noeviction`, `MISCONF` after a
    /// failed save) means publishes are refused too: `Readiness` is told (so `/readyz`
    /// says why) until a write is taken again, and the change is logged. Other refusals
    /// (a slot moving, a node loading) are logged and passed over, as before.
    func writeLiveness(_ link: RedisLink, shard index: Int) async throws(RedisError) -> Bool? {
        let keys = shards[index].keys
        let previous: RedisValue
        do {
            previous = try await runScript(
                "liveness", ClusterScripts.liveness, link: link,
                keys: [keys.gateway(configuration.gatewayID), keys.gateways],
                arguments: [Array(configuration.gatewayID.utf8), Array(String(Self.livenessMilliseconds).utf8)])
        } catch .server(let message) {
            // Redis adds where in the script it was refused: not the operator's concern.
            let words = message.range(of: " script: ").map { String(message[..<$0.lowerBound]) } ?? message
            if !(message.hasPrefix("OOM") || message.hasPrefix("MISCONF")) {
                configuration.log("redis: refused (\(message)); going on")
            } else if readiness.writes(shard: index, refused: words) == nil {
                configuration.log("\(shardName(index)): Redis refuses writes (\(words)); publishes are refused until it takes them again")
            }
            return nil
        }
        if readiness.writes(shard: index, refused: nil) != nil {
            configuration.log("\(shardName(index)): Redis takes writes again")
        }
        return previous != .null
    }

    /// The master is another node than before: publishes pause (unless a pause runs
    /// already) until every live gateway has raised its topics' counters here, this one included.
    func startFailoverPause(_ link: RedisLink, shard index: Int) async {
        func milliseconds(_ duration: Duration) -> Int64 {
            let (seconds, attoseconds) = duration.components
            return max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        }
        let longest = milliseconds(configuration.failoverPause)
        let shortest = min(longest, milliseconds(configuration.failoverPauseMinimum))
        _ = try? await runScript("startFailoverPause", ClusterScripts.startFailoverPause, link: link,
                                 keys: [shards[index].keys.publishPause],
                                 arguments: [Array(String(longest).utf8), Array(String(shortest).utf8)])
        shards[index].raisePending = true
        // Another gateway may reach this master after the pause ended (its liveness had lapsed
        // during the promotion) and start a new one, which waits for this gateway's mark
        // again: the pause is looked at every 100 ms for as long as a pause can last.
        shards[index].pauseWatchTurns = Int(configuration.failoverPause / Self.pauseWatchInterval)
    }

    /// Looks at the shard's pause: marks this gateway raised first if it owes the mark
    /// and its syncs are done, then tells `Readiness` whether (and at most how long)
    /// publishes still pause. A pause this gateway is not marked in is owed a mark.
    /// `linking`: the link is being prepared (not the shard's link in use yet).
    /// - Throws: only what says the link is lost (an error reply is passed over).
    func watchPause(_ link: RedisLink, shard index: Int, linking: Bool = false) async throws(RedisError) {
        let mark = shards[index].raisePending && !shards[index].raiseFailed && syncsDone(shard: index)
        let keys = shards[index].keys
        guard let reply = try await tolerating(await runScript(
            "pauseState", ClusterScripts.pauseState, link: link, keys: [keys.publishPause],
            arguments: [Array(keys.gatewayPrefix.utf8), Array(configuration.gatewayID.utf8), Array((mark ? "1" : "0").utf8)])),
              let parts = reply.array, parts.count == 2, let left = parts[0].integer else { return }
        guard linking || self.link(shard: index)?.generation == link.generation else { return }
        if left > 0 {
            readiness.paused(shard: index, for: .milliseconds(left))
            shards[index].raisePending = parts[1].integer != 1
        } else {
            readiness.paused(shard: index, for: nil)
            shards[index].raisePending = false
        }
    }

    /// Whether every followed topic of the shard has synced on its current link (its
    /// counters raised to the ids this gateway holds or acknowledged): none is still subscribing or syncing.
    func syncsDone(shard index: Int) -> Bool {
        !followed.contains { name, entry in
            guard routing.shard(of: name) == index else { return false }
            switch entry.phase {
            case .live, .leaving: return false
            case .subscribing, .syncing: return true
            }
        }
    }
}
