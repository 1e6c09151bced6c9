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
                    let hash = try await command.command(["SCRIPT", "LOAD", text], timeout: configuration.commandTimeout)
                    scriptHashes[name] = hash.string
                }
                _ = try await command.command(["SET", gatewayKey, "1", "PX", "3000"], timeout: configuration.commandTimeout)
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

    private func install(_ link: RedisLink) {
        linkGeneration = link.generation
        self.link = link
        probesSent = 0
        probesSeen = 0
        writtenCounts = [:]
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
            _ = try await link.command.command(["SET", gatewayKey, "1", "PX", "3000"], timeout: configuration.commandTimeout)
            try await writeCounts(link)
        } catch {
            return false
        }
        return true
    }

    /// Writes this gateway's subscriber counts that changed since last time (the
    /// publish script sums those of live gateways).
    private func writeCounts(_ link: RedisLink) async throws {
        let counts = await hub.subscriberCounts()
        var commands: [[String]] = []
        for channel in Channel.allCases {
            for (topic, count) in counts {
                let now = channel == .state ? count.state : count.events
                let before = writtenCounts[topic].map { channel == .state ? $0.state : $0.events } ?? 0
                if now != before { commands.append(countCommand(topic, channel, now)) }
            }
            for (topic, count) in writtenCounts where counts[topic] == nil {
                if (channel == .state ? count.state : count.events) != 0 { commands.append(countCommand(topic, channel, 0)) }
            }
        }
        writtenCounts = counts
        guard !commands.isEmpty else { return }
        let timeout = configuration.commandTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            for command in commands {
                group.addTask { _ = try await link.command.command(command, timeout: timeout) }
            }
            try await group.waitForAll()
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
