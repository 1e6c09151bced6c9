import RedisClient
import StreamHub

/// A shard's link while it is up: the monitor that waits for the link's loss or its
/// next heartbeat, and the heartbeat itself (the probe through pub/sub, this
/// gateway's liveness, its subscriber counts, the failover pause looked at).
extension ClusterEngine {
    /// How often a link's heartbeat runs (probe, liveness, counts, pause).
    static var heartbeatInterval: Duration { .seconds(1) }

    /// Watches the link until it is lost: it waits for a connection of the link to
    /// close (their `onClose` nudge the shard's wakeup) or the next heartbeat's
    /// deadline on the configured clock. At once and then every second a probe goes
    /// out, and must have come back through pub/sub (a subscribed connection can stop
    /// delivering while both sockets look fine; the link is ready only once the first
    /// one is back), liveness and subscriber counts are written and the pause looked
    /// at; while a pause runs (or this gateway owes its mark), the pause every 100 ms.
    func monitor(_ link: RedisLink, shard index: Int) async {
        let gone = ShardWait.linkGone(generation: link.generation)
        var sinceHeartbeat: Duration?  // nil: the heartbeat is due.
        while !hasCome(gone, shard: index) {
            if sinceHeartbeat == nil {
                guard await heartbeat(link, shard: index) else { return }
                sinceHeartbeat = .zero
            } else if watchesPause(shard: index) {
                if shards[index].pauseWatchTurns > 0 { shards[index].pauseWatchTurns -= 1 }
                do throws(RedisError) {
                    try await watchPause(link, shard: index)
                } catch {
                    return
                }
            }
            guard !hasCome(gone, shard: index) else { return }
            let untilHeartbeat = Self.heartbeatInterval - (sinceHeartbeat ?? .zero)
            let step = watchesPause(shard: index) ? min(Self.pauseWatchInterval, untilHeartbeat) : untilHeartbeat
            if await sleep(shard: index, for: step, unless: gone) { return }
            let since = (sinceHeartbeat ?? .zero) + step
            sinceHeartbeat = since >= Self.heartbeatInterval ? nil : since
        }
    }

    /// Whether the pause is looked at every 100 ms: one runs, this gateway owes its mark,
    /// or it failed over lately (`pauseWatchTurns`).
    private func watchesPause(shard index: Int) -> Bool {
        shards[index].raisePending || shards[index].pauseWatchTurns > 0 || readiness.isPaused(shard: index)
    }

    private func heartbeat(_ link: RedisLink, shard index: Int) async -> Bool {
        let keys = shards[index].keys
        guard shards[index].probesSent <= shards[index].probesSeen + 2 else {
            configuration.log("\(shardName(index)): pub/sub stopped delivering (probe \(shards[index].probesSeen + 1) never came back); reconnecting")
            readiness.down(shard: index, .probeLost)
            return false
        }
        shards[index].probesSent += 1
        do {
            let receivers = try await link.command.publish(Array(String(shards[index].probesSent).utf8),
                                                           to: keys.probeChannel(gateway: configuration.gatewayID),
                                                           mode: routing.isCluster ? .sharded : .global,
                                                           timeout: configuration.commandTimeout)
            guard receivers > 0 else {
                configuration.log("\(shardName(index)): this gateway's pub/sub connection is not subscribed any more; reconnecting")
                return false
            }
            // The previous value: none means the key lapsed (this gateway was slow for
            // 3 s) and another gateway's publish may have deleted its counts.
            if try await writeLiveness(link, shard: index) == false { shards[index].countsNeedFullWrite = true }
            // ROLE before the epoch: a node turned replica also lost its epoch in the sync.
            if !routing.isCluster, let role = try await masterRole(of: link.command), role != "master" {
                let next = if case .sentinel = configuration.redis { "asking the sentinels for the master" }
                           else { "connecting again until it is a master" }
                configuration.log("redis: the node in use is a \(Self.roleName(role)) now; \(next)")
                readiness.down(shard: index, .noMaster("the node in use became a \(Self.roleName(role))"))
                return false
            }
            guard try await epochHolds(link, shard: index) else { return false }
            try await keepPublisherBusy(link, shard: index)
            try await watchPause(link, shard: index)
            shards[index].heartbeats += 1
            if shards[index].heartbeats % 10 == 0 { shards[index].countsNeedFullWrite = true }
            try await writeCounts(link, shard: index)
        } catch {
            if routing.isCluster, ClusterRedirection(error) != nil || ClusterRefusal(error) != nil {
                requestMapRefresh()
            }
            return false
        }
        return true
    }

    /// Whether Redis still holds the epoch this link found (a `FLUSHALL` or `FLUSHDB`, or a
    /// restart behind a proxy that kept the connection, empties Redis under a live link).
    /// If not, the link is given up: the next one finds the epoch gone and pauses publishes
    /// while the gateways restore the ids (`checkEpoch`), as after a restart.
    private func epochHolds(_ link: RedisLink, shard index: Int) async throws(RedisError) -> Bool {
        guard let known = shards[index].knownEpoch else { return true }
        let now: String?
        do {
            now = try await link.command.command(["GET", shards[index].keys.epoch], timeout: configuration.commandTimeout).string
        } catch .server(let message) {
            // Refused (a slot moving on Redis Cluster answers ASK or MOVED): looked at again next time.
            if routing.isCluster, ClusterRedirection(.server(message)) != nil { requestMapRefresh() }
            return true
        }
        guard now != known, shards[index].knownEpoch == known else { return true }
        configuration.log("\(shardName(index)): Redis lost its data under a live link (its epoch key is "
                          + "\(now == nil ? "gone" : "another"): FLUSHALL, or a restart); linking anew")
        readiness.down(shard: index, .unreachable("Redis lost its data; the gateways restore the ids"))
        return false
    }

    /// With `--redis-min-replicas` the publishing connection is its own and may idle for
    /// long: a `PING` every heartbeat keeps Redis's `timeout` from closing it (and the link
    /// with it). Sent only while no publish holds the turn, so it does not wait behind a
    /// `WAIT` (but for one a cancelled publish left running: 500 ms, under the timeout).
    private func keepPublisherBusy(_ link: RedisLink, shard index: Int) async throws(RedisError) {
        guard link.publisher !== link.command, replicaTurns[index]?.busy != true else { return }
        do {
            _ = try await link.publisher.command(["PING"], timeout: configuration.commandTimeout)
        } catch .server {
            // Refused (`MISCONF` refuses even `PING`): Redis read it all the same, and its idle time starts over.
        }
    }

    /// Runs a command whose error reply (e.g. OOM under `noeviction`) is logged and
    /// passed over: only a lost or silent link is a reason to reconnect.
    func tolerating(_ command: @autoclosure () async throws(RedisError) -> RedisValue) async throws(RedisError) -> RedisValue? {
        do {
            return try await command()
        } catch .server(let message) {
            configuration.log("redis: refused (\(message)); going on")
            return nil
        }
    }

    /// Writes this gateway's subscriber counts of the shard's topics that changed since
    /// last time, or all of them (deleting those it wrote before) when the shard's
    /// `countsNeedFullWrite`; the publish script sums those of live gateways.
    private func writeCounts(_ link: RedisLink, shard index: Int) async throws(RedisError) {
        let onShard = { (topic: String) in self.routing.shard(of: topic) == index }
        let counts = (await hub.subscriberCounts()).filter { onShard($0.key) }
        let written = writtenCounts.filter { onShard($0.key) }
        let full = shards[index].countsNeedFullWrite
        var commands: [[String]] = []
        for channel in Channel.allCases {
            func count(_ pair: (state: Int, events: Int)) -> Int { channel == .state ? pair.state : pair.events }
            for (topic, pair) in counts {
                let now = count(pair)
                if full || now != written[topic].map(count) ?? 0 { commands.append(countCommand(topic, channel, now)) }
            }
            for (topic, pair) in written where counts[topic] == nil && (full || count(pair) != 0) {
                commands.append(countCommand(topic, channel, 0))
            }
        }
        for topic in written.keys where counts[topic] == nil { writtenCounts[topic] = nil }
        for (topic, pair) in counts { writtenCounts[topic] = pair }
        shards[index].countsNeedFullWrite = false
        guard !commands.isEmpty else { return }
        let timeout = configuration.commandTimeout
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for command in commands {
                    group.addTask { _ = try await link.command.command(command, timeout: timeout) }
                }
                try await group.waitForAll()
            }
        } catch let error as RedisError {
            if index < shards.count { shards[index].countsNeedFullWrite = true }
            if case .server = error { return }  // Refused (OOM, a slot moving): written again next time.
            throw error
        } catch {
            shards[index].countsNeedFullWrite = true
        }
    }

    private func countCommand(_ topic: String, _ channel: Channel, _ count: Int) -> [String] {
        let key = ClusterKeys(topic: topic).counts(channel)
        return count > 0 ? ["HSET", key, configuration.gatewayID, String(count)] : ["HDEL", key, configuration.gatewayID]
    }
}
