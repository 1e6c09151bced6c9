import RedisClient
import StreamHub

/// The link's life: connect (retrying with back-off while Redis is unreachable),
/// watch it (a probe through pub/sub every second, liveness and subscriber counts),
/// and on loss fail what waits and start over.
extension ClusterEngine {
    /// Runs until `shutdown()`: the link's supervision, and the worker that sends
    /// SUBSCRIBEs and syncs.
    public func run() async {
        await withDiscardingTaskGroup { group in
            group.addTask { await self.runWorker() }
            await self.superviseLink()
        }
    }

    private var gatewayKey: String { ClusterKeys.gatewayPrefix + configuration.gatewayID }
    private var probeChannel: [UInt8] { ClusterKeys.probeChannel(gateway: configuration.gatewayID) }

    private func superviseLink() async {
        var backoff: Duration = .milliseconds(100)
        var everUp = false
        var reportedDown = false
        while !isShutdown {
            let link: RedisLink
            do {
                link = try await connect()
            } catch {
                if !reportedDown {
                    configuration.log("redis \(configuration.redis): unreachable (\(error)); retrying, not ready meanwhile")
                    reportedDown = true
                }
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, configuration.connectTimeout)
                continue
            }
            guard !isShutdown else {
                link.close()
                return
            }
            install(link)
            backoff = .milliseconds(100)
            reportedDown = false
            if everUp { countReconnect() }
            configuration.log("redis \(configuration.redis): \(everUp ? "connected again" : "connected"), ready")
            everUp = true
            await monitor(link)
            linkLost(link)
            if !isShutdown {
                configuration.log("redis \(configuration.redis): connection lost; publishes and new subscriptions get 503 until it is back")
            }
        }
    }

    private func connect() async throws -> RedisLink {
        let url = configuration.redis
        let generation = linkGeneration + 1
        let command = try await RedisConnection.connect(to: url, timeout: configuration.connectTimeout)
        do {
            let subscriber = try await RedisSubscriber.connect(to: url, timeout: configuration.connectTimeout) { [weak self] message in
                await self?.received(message, generation: generation)
            }
            let link = RedisLink(command: command, subscriber: subscriber, generation: generation)
            do {
                try await subscriber.subscribe([probeChannel], timeout: configuration.commandTimeout)
                for (name, text) in [("publish", ClusterScripts.publish), ("sync", ClusterScripts.sync),
                                     ("floor", ClusterScripts.floor)] {
                    // A refusal (e.g. OOM) is no reason to stay away: EVAL sends the text instead.
                    let hash = try await tolerating(await command.command(["SCRIPT", "LOAD", text], timeout: configuration.commandTimeout))
                    scriptHashes[name] = hash?.string
                }
                _ = try await tolerating(await command.command(["SET", gatewayKey, "1", "PX", "3000"],
                                                         timeout: configuration.commandTimeout))
                try await checkEpoch(command)
            } catch {
                link.close()
                throw error
            }
            return link
        } catch {
            command.close()
            throw error
        }
    }

    /// Notices a Redis that lost its data (its epoch is gone or another): then, if this
    /// gateway knew the old one, publishes pause for 3 s (`sse:refloor`) while every
    /// gateway's syncs raise the counters of its topics to the ids it holds, so ids
    /// never go backwards, whichever gateway publishes first.
    private func checkEpoch(_ command: RedisConnection) async throws(RedisError) {
        let timeout = configuration.commandTimeout
        var current = try await command.command(["GET", ClusterKeys.epoch], timeout: timeout).string
        if current == nil {
            var generator = SystemRandomNumberGenerator()
            let fresh = String(generator.next() as UInt64, radix: 16)
            _ = try await command.command(["SET", ClusterKeys.epoch, fresh, "NX"], timeout: timeout)
            current = try await command.command(["GET", ClusterKeys.epoch], timeout: timeout).string
            if knownEpoch != nil {
                _ = try await command.command(["SET", ClusterKeys.refloor, "1", "PX", "3000"], timeout: timeout)
            }
        }
        if let knownEpoch, knownEpoch != current {
            configuration.log("redis: Redis lost its data; ids go on from what the gateways hold")
        }
        knownEpoch = current
    }

    private func install(_ link: RedisLink) {
        linkGeneration = link.generation
        self.link = link
        probesSent = 0
        probesSeen = 0
        countsNeedFullWrite = true  // Whatever changed while away: written anew, stale ones deleted.
        unsubscribing = []
        setReady(true, generation: link.generation)
        let generation = link.generation
        link.command.onClose { [weak self] in self?.connectionClosed(generation: generation) }
        link.subscriber.onClose { [weak self] in self?.connectionClosed(generation: generation) }
        // Every followed topic subscribes again and syncs from where its mirror stands.
        doorbellRinger.yield()
    }

    /// Watches the link until it is lost: waiters' deadlines every 100 ms; every
    /// second a probe must have come back through pub/sub (a subscribed connection
    /// can stop delivering while both sockets look fine), and liveness and
    /// subscriber counts are written.
    private func monitor(_ link: RedisLink) async {
        var ticks = 0
        while !isShutdown, link.isOpen, self.link?.generation == link.generation {
            try? await Task.sleep(for: .milliseconds(100))
            expireWaiters(now: .now)
            ticks += 1
            if ticks % 10 == 0, !(await heartbeat(link)) { return }
        }
    }

    private func heartbeat(_ link: RedisLink) async -> Bool {
        guard probesSent <= probesSeen + 2 else {
            configuration.log("redis: pub/sub stopped delivering (probe \(probesSeen + 1) never came back); reconnecting")
            return false
        }
        probesSent += 1
        do {
            let receivers = try await link.command.command(["PUBLISH", String(decoding: probeChannel, as: UTF8.self),
                                                            String(probesSent)], timeout: configuration.commandTimeout)
            guard receivers.integer ?? 0 > 0 else {
                configuration.log("redis: this gateway's pub/sub connection is not subscribed any more; reconnecting")
                return false
            }
            // GET: the previous value; none means the key lapsed (this gateway was slow for
            // 3 s) and another gateway's publish may have deleted its counts.
            let previous = try await tolerating(await link.command.command(["SET", gatewayKey, "1", "PX", "3000", "GET"],
                                                                     timeout: configuration.commandTimeout))
            if previous == .null { countsNeedFullWrite = true }
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
    private func tolerating(_ command: @autoclosure () async throws(RedisError) -> RedisValue) async throws(RedisError) -> RedisValue? {
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
    func linkLost(_ lost: RedisLink) {
        lost.close()
        guard link?.generation == lost.generation else { return }
        link = nil
        setReady(false, generation: 0)
        for name in Array(followed.keys) {
            for waiter in followed[name]?.linkLost() ?? [] { waiter.resume.resume(returning: false) }
        }
    }

    /// Runs a script by hash, sending its text when Redis does not have it (a Redis
    /// restarted since `SCRIPT LOAD` answers `NOSCRIPT`).
    func runScript(_ name: String, _ text: String, link: RedisLink, keys: [String],
                   arguments: [[UInt8]]) async throws(RedisError) -> RedisValue {
        let tail = [Array(String(keys.count).utf8)] + keys.map { Array($0.utf8) } + arguments
        if let hash = scriptHashes[name] {
            do {
                return try await link.command.command([Array("EVALSHA".utf8), Array(hash.utf8)] + tail,
                                                      timeout: configuration.commandTimeout)
            } catch .server(let message) where message.hasPrefix("NOSCRIPT") {
                // Fall through to EVAL, which also caches the script again.
            }
        }
        return try await link.command.command([Array("EVAL".utf8), Array(text.utf8)] + tail,
                                              timeout: configuration.commandTimeout)
    }
}
