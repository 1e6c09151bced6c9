import RedisClient
import StreamHub

/// The link's life: connect (retrying with back-off while Redis is unreachable),
/// watch it (a probe through pub/sub every second, liveness and subscriber counts),
/// and on loss fail what waits and start over.
extension ClusterEngine {
    /// Runs until `shutdown()`: the link's supervision, the worker that sends
    /// SUBSCRIBEs and syncs, and in Sentinel mode the watch for `+switch-master`.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runWorker() }
            if case .sentinel(let url) = configuration.redis {
                group.addTask { await self.watchSentinels(url) }
            }
            await self.superviseLink()
        }
    }

    var gatewayKey: String { ClusterKeys.gatewayPrefix + configuration.gatewayID }
    var probeChannel: [UInt8] { ClusterKeys.probeChannel(gateway: configuration.gatewayID) }

    /// Connects, watches the link until it is lost, and again, until shutdown. The
    /// phase is looked at again after every `await`.
    private func superviseLink() async {
        var everUp = false
        var reportedDown = false
        while case .connecting(let attempt, let lastMaster) = shard.phase, !Task.isCancelled {
            if attempt > 0 { await backOff(LinkPhase.backoff(attempt: attempt, ceiling: configuration.reconnectCeiling)) }
            guard case .connecting = shard.phase else { return }
            shard.relinkRequested = false
            let link: RedisLink
            let master: RedisURL
            do throws(NotReady) {
                (link, master) = try await connect()
            } catch {
                if !reportedDown {
                    configuration.log("redis \(configuration.redis): \(error.text); retrying, not ready meanwhile")
                    reportedDown = true
                }
                readiness.stillDown(error)
                shard.phase = shard.phase.after(.failed)
                continue
            }
            guard case .connecting = shard.phase else {
                link.close()
                return
            }
            if shard.relinkRequested {
                // Sentinel announced a master while this one was being connected (it may
                // be the old one, still answering ROLE master): ask the sentinels again.
                link.close()
                shard.phase = shard.phase.after(.failed)
                continue
            }
            let failedOver = lastMaster.map { $0 != master } ?? false
            shard.phase = shard.phase.after(.connected(link, master: master))
            install(link)
            reportedDown = false
            if everUp { countReconnect() }
            configuration.log("redis \(configuration.redis): \(everUp ? "connected again" : "connected") to \(master), ready")
            everUp = true
            if failedOver { await failedOverTo(master, link: link) }
            await monitor(link)
            linkLost(link, because: .unreachable("the connection was lost"))
            if !isShutdown {
                configuration.log("redis \(configuration.redis): connection lost; publishes and new subscriptions get 503 until it is back")
            }
        }
    }

    /// Waits `duration` on the configured clock, in steps of 50 ms so that it ends early
    /// when a sentinel announced a new master (or the engine shut down) meanwhile.
    private func backOff(_ duration: Duration) async {
        let step = Duration.milliseconds(50)
        var left = duration
        while left > .zero, !shard.relinkRequested, !isShutdown {
            try? await configuration.clock.sleep(for: min(step, left), tolerance: nil)
            left -= step
        }
    }

    private func install(_ link: RedisLink) {
        shard.generation = link.generation
        shard.probesSent = 0
        shard.probesSeen = 0
        countsNeedFullWrite = true  // Whatever changed while away: written anew, stale ones deleted.
        unsubscribing = []
        readiness.up(generation: link.generation)
        let generation = link.generation
        link.command.onClose { [weak self] in self?.connectionClosed(generation: generation) }
        link.subscriber.onClose { [weak self] in self?.connectionClosed(generation: generation) }
        link.publisher.onClose { [weak self] in self?.connectionClosed(generation: generation) }
        // Every followed topic subscribes again and syncs from where its mirror stands.
        doorbellRinger.yield()
    }

    /// Watches the link until it is lost: waiters' deadlines every 100 ms; at once and
    /// then every second a probe goes out, and must have come back through pub/sub (a
    /// subscribed connection can stop delivering while both sockets look fine; the link
    /// is ready only once the first one is back), and liveness and subscriber counts are written.
    private func monitor(_ link: RedisLink) async {
        var ticks = 0
        while !isShutdown, link.isOpen, self.link?.generation == link.generation {
            if ticks % 10 == 0, !(await heartbeat(link)) { return }
            try? await configuration.clock.sleep(for: .milliseconds(100), tolerance: nil)
            expireWaiters(now: .now)
            ticks += 1
        }
    }

    private func heartbeat(_ link: RedisLink) async -> Bool {
        guard shard.probesSent <= shard.probesSeen + 2 else {
            configuration.log("redis: pub/sub stopped delivering (probe \(shard.probesSeen + 1) never came back); reconnecting")
            readiness.down(.probeLost)
            return false
        }
        shard.probesSent += 1
        do {
            let receivers = try await link.command.command(["PUBLISH", String(decoding: probeChannel, as: UTF8.self),
                                                            String(shard.probesSent)], timeout: configuration.commandTimeout)
            guard receivers.integer ?? 0 > 0 else {
                configuration.log("redis: this gateway's pub/sub connection is not subscribed any more; reconnecting")
                return false
            }
            // GET: the previous value; none means the key lapsed (this gateway was slow for
            // 3 s) and another gateway's publish may have deleted its counts.
            let previous = try await tolerating(await link.command.command(["SET", gatewayKey, "1", "PX", "3000", "GET"],
                                                                     timeout: configuration.commandTimeout))
            if previous == .null { countsNeedFullWrite = true }
            try await notePause(link.command)
            if case .sentinel = configuration.redis {
                let role = try await Sentinel.role(of: link.command, timeout: configuration.commandTimeout)
                guard role == "master" else {
                    configuration.log("redis: the node in use is a \(role) now; asking the sentinels for the master")
                    readiness.down(.noMaster("the node in use became a \(role)"))
                    return false
                }
            }
            heartbeats += 1
            if heartbeats % 10 == 0 { countsNeedFullWrite = true }
            try await writeCounts(link)
        } catch {
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

    /// Writes this gateway's subscriber counts that changed since last time, or all of
    /// them (deleting those it wrote before) when `countsNeedFullWrite`; the publish
    /// script sums those of live gateways.
    private func writeCounts(_ link: RedisLink) async throws(RedisError) {
        let counts = await hub.subscriberCounts()
        let full = countsNeedFullWrite
        var commands: [[String]] = []
        for channel in Channel.allCases {
            func count(_ pair: (state: Int, events: Int)) -> Int { channel == .state ? pair.state : pair.events }
            for (topic, pair) in counts {
                let now = count(pair)
                if full || now != writtenCounts[topic].map(count) ?? 0 { commands.append(countCommand(topic, channel, now)) }
            }
            for (topic, pair) in writtenCounts where counts[topic] == nil && (full || count(pair) != 0) {
                commands.append(countCommand(topic, channel, 0))
            }
        }
        writtenCounts = counts
        countsNeedFullWrite = false
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
            countsNeedFullWrite = true
            if case .server = error { return }  // Refused (OOM): written again next time.
            throw error
        } catch {
            countsNeedFullWrite = true
        }
    }

    private func countCommand(_ topic: String, _ channel: Channel, _ count: Int) -> [String] {
        let key = ClusterKeys(topic: topic).counts(channel)
        return count > 0 ? ["HSET", key, configuration.gatewayID, String(count)] : ["HDEL", key, configuration.gatewayID]
    }

    /// The link is gone: not ready, waiters refused, every topic to subscribe again.
    func linkLost(_ lost: RedisLink, because reason: NotReady = .unreachable("the connection was lost")) {
        lost.close()
        guard link?.generation == lost.generation else { return }
        shard.phase = shard.phase.after(.lost(generation: lost.generation))
        readiness.down(reason)
        for name in Array(followed.keys) {
            for waiter in followed[name]?.linkLost() ?? [] { waiter.resume.resume(returning: false) }
        }
    }

    /// Runs a script by hash, sending its text when Redis does not have it (a Redis
    /// restarted since `SCRIPT LOAD` answers `NOSCRIPT`).
    func runScript(_ name: String, _ text: String, link: RedisLink, on connection: RedisConnection? = nil,
                   keys: [String], arguments: [[UInt8]]) async throws(RedisError) -> RedisValue {
        let connection = connection ?? link.command
        let tail = [Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + arguments
        if let hash = scriptHashes[name] {
            do {
                return try await connection.command([Array("EVALSHA".utf8), Array(hash.utf8)] + tail,
                                                      timeout: configuration.commandTimeout)
            } catch .server(let message) where message.hasPrefix("NOSCRIPT") {
                // Fall through to EVAL, which also caches the script again.
            }
        }
        return try await connection.command([Array("EVAL".utf8), Array(text.utf8)] + tail,
                                              timeout: configuration.commandTimeout)
    }
}
