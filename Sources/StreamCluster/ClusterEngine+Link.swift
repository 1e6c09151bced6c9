import RedisClient
import StreamHub

/// Each shard's link's life: connect (retrying with back-off while its Redis is
/// unreachable), watch it (a probe through pub/sub every second, liveness and
/// subscriber counts), and on loss fail what waits on that shard and start over.
/// Shards are independent: one shard's loss touches only its own topics.
extension ClusterEngine {
    /// Runs until `shutdown()`: each shard's supervision, the worker that sends
    /// SUBSCRIBEs and syncs, in Sentinel mode the watch for `+switch-master`, on Redis
    /// Cluster the slot map's watch (which adds shards as the map names masters).
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runWorker() }
            switch configuration.redis {
            case .sentinel(let url): group.addTask { await self.watchSentinels(url) }
            case .cluster: if let slotMaps { group.addTask { await self.watchSlotMap(slotMaps) } }
            case .server: break
            }
            for await index in newShards {
                group.addTask { await self.superviseLink(shard: index) }
            }
        }
    }


    /// How the log names shard `index`: the Redis URL, or on Redis Cluster the shard's master.
    func shardName(_ index: Int) -> String {
        if routing.isCluster, let master = shards[index].clusterMaster { return "redis shard \(master.address)" }
        return "redis \(configuration.redis)"
    }

    /// Connects, watches the link until it is lost, and again, until shutdown (or,
    /// on Redis Cluster, until the shard is retired). The phase is looked at again after every `await`.
    private func superviseLink(shard index: Int) async {
        var everUp = false
        var reportedDown = false
        while case .connecting(let attempt, let lastMaster) = shards[index].phase, !Task.isCancelled {
            if attempt > 0 {
                await backOff(shard: index, LinkPhase.backoff(attempt: attempt, ceiling: configuration.reconnectCeiling))
            }
            guard case .connecting = shards[index].phase else { return }
            shards[index].relinkRequested = false
            let link: RedisLink
            let master: RedisURL
            switch await connectUnlessRelinked(shard: index) {
            case .linked(let made, let at):
                (link, master) = (made, at)
            case .abandoned:
                // Another master was named while connecting (the one tried may hang, e.g. a
                // stopped process whose TCP still accepts): try the new one at once.
                shards[index].phase = shards[index].phase.after(.failed)
                continue
            case .failed(let error):
                if !reportedDown {
                    configuration.log("\(shardName(index)): \(error.text); retrying, not ready meanwhile")
                    reportedDown = true
                }
                readiness.stillDown(shard: index, error)
                shards[index].phase = shards[index].phase.after(.failed)
                if let master = shards[index].clusterMaster { requestMapRefresh(lost: [master.address]) }
                continue
            }
            guard case .connecting = shards[index].phase else {
                link.close()
                return
            }
            if shards[index].relinkRequested {
                // Sentinel announced a master while this one was being connected (it may
                // be the old one, still answering ROLE master), or the slot map named
                // another master: ask again.
                link.close()
                shards[index].phase = shards[index].phase.after(.failed)
                continue
            }
            let failedOver = lastMaster.map { $0 != master } ?? false
            shards[index].phase = shards[index].phase.after(.connected(link, master: master))
            install(link, shard: index)
            reportedDown = false
            if everUp { countReconnect() }
            configuration.log("\(shardName(index)): \(everUp ? "connected again" : "connected") to \(master), ready")
            everUp = true
            if failedOver { await failedOverTo(master, link: link, shard: index) }
            await monitor(link, shard: index)
            linkLost(link, shard: index, because: .unreachable("the connection was lost"))
            if !isShutdown, !shards[index].retired {
                configuration.log("\(shardName(index)): connection lost; publishes and new subscriptions "
                                  + "of its topics get 503 until it is back")
            }
        }
    }

    /// Waits `duration` on the configured clock, or less: until a new master is named
    /// (or the engine shuts down).
    func backOff(shard index: Int, _ duration: Duration) async {
        _ = await sleep(shard: index, for: duration, unless: .relink)
    }

    /// How a connect attempt ended.
    enum ConnectAttempt {
        case linked(RedisLink, RedisURL)
        case failed(NotReady)
        /// A new master was named meanwhile: the attempt was cancelled, what it opened closed.
        case abandoned
    }

    /// Connects, racing the attempt against the naming of another master (the slot map,
    /// Sentinel's `+switch-master`): whichever comes first wins, the other is cancelled.
    /// A link the cancelled attempt still made is closed.
    func connectUnlessRelinked(shard index: Int) async -> ConnectAttempt {
        let wakeup = shards[index].wakeup
        return await withTaskGroup(of: ConnectAttempt?.self) { group in
            group.addTask {
                do throws(NotReady) {
                    let (link, master) = try await self.connect(shard: index)
                    return .linked(link, master)
                } catch {
                    return .failed(error)
                }
            }
            group.addTask {
                await self.until(.relink, shard: index, wakeup: wakeup)
                return Task.isCancelled ? nil : .abandoned
            }
            var outcome: ConnectAttempt?
            while let next = await group.next() {
                guard let next else { continue }
                if outcome == nil {
                    outcome = next
                    group.cancelAll()
                } else if case .linked(let late, _) = next {
                    late.close()
                }
            }
            return outcome ?? .abandoned
        }
    }

    private func install(_ link: RedisLink, shard index: Int) {
        shards[index].generation = link.generation
        shards[index].probesSent = 0
        shards[index].probesSeen = 0
        shards[index].countsNeedFullWrite = true  // Whatever changed while away: written anew, stale ones deleted.
        unsubscribing = unsubscribing.filter { routing.shard(of: $0) != index }
        readiness.up(shard: index, generation: link.generation)
        let generation = link.generation
        let wakeup = shards[index].wakeup
        link.command.onClose { [weak self] in self?.connectionClosed(generation: generation); wakeup.signal() }
        link.subscriber.onClose { [weak self] in self?.connectionClosed(generation: generation); wakeup.signal() }
        link.publisher.onClose { [weak self] in self?.connectionClosed(generation: generation); wakeup.signal() }
        // Every followed topic of the shard subscribes again and syncs from where its mirror stands.
        doorbellRinger.yield()
    }

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
            try await watchPause(link, shard: index)
            if case .sentinel = configuration.redis {
                let role = try await Sentinel.role(of: link.command, timeout: configuration.commandTimeout)
                guard role == "master" else {
                    configuration.log("redis: the node in use is a \(role) now; asking the sentinels for the master")
                    readiness.down(shard: index, .noMaster("the node in use became a \(role)"))
                    return false
                }
            }
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

    /// The shard's link is gone: not ready, its topics' waiters refused, its topics to subscribe again.
    func linkLost(_ lost: RedisLink, shard index: Int, because reason: NotReady = .unreachable("the connection was lost")) {
        lost.close()
        guard link(shard: index)?.generation == lost.generation else { return }
        shards[index].phase = shards[index].phase.after(.lost(generation: lost.generation))
        readiness.down(shard: index, reason)
        let names = followed.keys.filter { topicShard[$0] == index || routing.shard(of: $0) == index }
        for name in names { topicShard[name] = nil }
        topicsLostTheLink(names)
    }

    /// Runs a script by hash, sending its text when Redis does not have it (a Redis
    /// restarted since `SCRIPT LOAD`, or a cluster node never asked, answers `NOSCRIPT`);
    /// `asking`: after `ASKING`, in one write (a slot being imported by that node).
    func runScript(_ name: String, _ text: String, link: RedisLink, on connection: RedisConnection? = nil,
                   keys: [String], arguments: [[UInt8]], asking: Bool = false) async throws(RedisError) -> RedisValue {
        try await Self.evaluate(text, hash: scriptHashes[name], on: connection ?? link.command, keys: keys,
                                arguments: arguments, asking: asking, timeout: configuration.commandTimeout)
    }

    /// `runScript` off the engine (a publish on its caller's loop): `hash` is the script's
    /// from `scriptHashes`, read on the engine.
    nonisolated static func evaluate(_ text: String, hash: String?, on connection: RedisConnection, keys: [String],
                                     arguments: [[UInt8]], asking: Bool, timeout: Duration) async throws(RedisError) -> RedisValue {
        let tail = [Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + arguments
        if let hash {
            let command = [Array("EVALSHA".utf8), Array(hash.utf8)] + tail
            do {
                return asking ? try await connection.commandAfterAsking(command, timeout: timeout)
                              : try await connection.command(command, timeout: timeout)
            } catch .server(let message) where message.hasPrefix("NOSCRIPT") {
                // Fall through to EVAL, which also caches the script again.
            }
        }
        let command = [Array("EVAL".utf8), Array(text.utf8)] + tail
        return asking ? try await connection.commandAfterAsking(command, timeout: timeout)
                      : try await connection.command(command, timeout: timeout)
    }
}
