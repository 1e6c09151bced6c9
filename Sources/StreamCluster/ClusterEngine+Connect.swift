import RedisClient
import StreamHub

/// Making a link: which node is the master (the URL's server, or the one the
/// sentinels name), both connections opened and prepared (probe subscribed, scripts
/// loaded, liveness written), and what that Redis tells of a loss of data (its epoch,
/// a running pause, a master at another address than before).
extension ClusterEngine {
    /// The master to use: the URL's server, or the one the sentinels name now.
    func locateMaster() async throws(NotReady) -> RedisURL {
        switch configuration.redis {
        case .server(let url):
            return url
        case .sentinel(let url):
            do throws(RedisError) {
                let (master, index) = try await Sentinel.masterAddress(url, startingAt: shard.sentinelIndex,
                                                                       timeout: configuration.connectTimeout)
                shard.sentinelIndex = index
                return master
            } catch {
                throw .noMaster("\(error)")
            }
        }
    }

    /// Opens a link to the master, within `connectTimeout` per connection: commands (in
    /// Sentinel mode first asked `ROLE`: a node that is not master is no link), publishes
    /// (their own connection with `minReplicas`), pub/sub; then `prepare`s it.
    /// - Throws: why there is no link, as `/readyz` says it.
    func connect() async throws(NotReady) -> (RedisLink, RedisURL) {
        let url = try await locateMaster()
        let generation = shard.generation + 1
        let timeout = configuration.connectTimeout
        do throws(RedisError) {
            let command = try await RedisConnection.connect(to: url, timeout: timeout)
            var opened: [RedisConnection] = [command]
            do throws(RedisError) {
                if case .sentinel = configuration.redis {
                    // Sentinel may name a node that is no master (yet, or any more): ROLE says.
                    let role = try await Sentinel.role(of: command, timeout: configuration.commandTimeout)
                    guard role == "master" else { throw .unreachable("\(url) is a \(role), not the master") }
                }
                let publisher = configuration.minReplicas > 0
                    ? try await RedisConnection.connect(to: url, timeout: timeout) : command
                opened.append(publisher)
                let subscriber = try await RedisSubscriber.connect(to: url, timeout: timeout) { [weak self] message in
                    await self?.received(message, generation: generation)
                }
                let link = RedisLink(command: command, subscriber: subscriber, publisher: publisher, generation: generation)
                do throws(RedisError) {
                    try await prepare(link)
                } catch {
                    link.close()
                    throw error
                }
                return (link, url)
            } catch {
                for connection in opened { connection.close() }
                throw error
            }
        } catch {
            if case .unreachable(let reason) = error, reason.contains("not the master") { throw .noMaster(reason) }
            throw .unreachable("\(url): \(error)")
        }
    }

    /// What a new link needs before it serves: the probe subscribed, the scripts
    /// loaded, this gateway's liveness written, the epoch checked, a running pause noted.
    func prepare(_ link: RedisLink) async throws(RedisError) {
        let command = link.command
        try await link.subscriber.subscribe([probeChannel], timeout: configuration.commandTimeout)
        for (name, text) in [("publish", ClusterScripts.publish), ("sync", ClusterScripts.sync),
                             ("raiseIDs", ClusterScripts.raiseIDs)] {
            // A refusal (e.g. OOM) is no reason to stay away: EVAL sends the text instead.
            let hash = try await tolerating(await command.command(["SCRIPT", "LOAD", text], timeout: configuration.commandTimeout))
            scriptHashes[name] = hash?.string
        }
        _ = try await tolerating(await command.command(["SET", gatewayKey, "1", "PX", "3000"],
                                                 timeout: configuration.commandTimeout))
        try await checkEpoch(command)
        try await notePause(command)
    }

    /// Reads how long publishes still pause (`sse:refloor`'s time to live), for `/readyz`.
    func notePause(_ command: RedisConnection) async throws(RedisError) {
        let left = try await command.command(["PTTL", ClusterKeys.publishPause], timeout: configuration.commandTimeout).integer ?? -2
        if left > 0 { readiness.pause(until: .now + .milliseconds(left)) }
    }

    /// The master is another node than before (Sentinel promoted a replica): it may
    /// lack the last publishes, so it is treated like a Redis that lost data —
    /// publishes pause while every gateway's syncs raise its topics' counters to the
    /// ids it holds (the first gateway to notice starts the pause; the others see it).
    func failedOverTo(_ master: RedisURL, link: RedisLink) async {
        countFailover()
        configuration.log("redis: the master is now \(master) (failover); ids go on from what the gateways hold")
        let pause = configuration.failoverPause
        let (seconds, attoseconds) = pause.components
        let milliseconds = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        _ = try? await link.command.command(["SET", ClusterKeys.publishPause, "1", "PX", String(milliseconds), "NX"],
                                            timeout: configuration.commandTimeout)
        _ = try? await notePause(link.command)
    }

    /// Notices a Redis that lost its data (its epoch is gone or another): then, if this
    /// gateway knew the old one, publishes pause for 3 s (`sse:refloor`) while every
    /// gateway's syncs raise the counters of its topics to the ids it holds, so ids
    /// never go backwards, whichever gateway publishes first.
    func checkEpoch(_ command: RedisConnection) async throws(RedisError) {
        let timeout = configuration.commandTimeout
        var current = try await command.command(["GET", ClusterKeys.epoch], timeout: timeout).string
        if current == nil {
            var generator = SystemRandomNumberGenerator()
            let fresh = String(generator.next() as UInt64, radix: 16)
            _ = try await command.command(["SET", ClusterKeys.epoch, fresh, "NX"], timeout: timeout)
            current = try await command.command(["GET", ClusterKeys.epoch], timeout: timeout).string
            if shard.knownEpoch != nil {
                _ = try await command.command(["SET", ClusterKeys.publishPause, "1", "PX", "3000"], timeout: timeout)
            }
        }
        if let known = shard.knownEpoch, known != current {
            configuration.log("redis: Redis lost its data; ids go on from what the gateways hold")
        }
        shard.knownEpoch = current
    }
}
