import RedisClient
import StreamHub

/// Making a link: which node is the master (the URL's server, or the one the
/// sentinels name), both connections opened and prepared (probe subscribed, scripts
/// loaded, liveness written), and what that Redis tells of a loss of data (its epoch,
/// a running pause, a master at another address than before).
extension ClusterEngine {
    /// The master to use: the URL's server, the one the sentinels name now, or the
    /// master of the shard's slots in the last slot map.
    func locateMaster(shard index: Int) async throws(NotReady) -> RedisURL {
        switch configuration.redis {
        case .server(let url):
            return url
        case .sentinel(let url):
            do throws(RedisError) {
                let (master, answered) = try await Sentinel.masterAddress(url, startingAt: shards[index].sentinelIndex,
                                                                          timeout: configuration.connectTimeout)
                shards[index].sentinelIndex = answered
                return master
            } catch {
                throw .noMaster("\(error)")
            }
        case .cluster(let url):
            guard let master = shards[index].clusterMaster, let seed = url.seeds.first else {
                throw .noMaster("the slot map names no master for this shard's slots")
            }
            return master.address.url(from: seed)
        }
    }

    /// Opens a link to the master, within `connectTimeout` per connection: commands (in
    /// Sentinel mode first asked `ROLE`: a node that is not master is no link), publishes
    /// (their own connection with `minReplicas`), pub/sub; then `prepare`s it.
    /// - Throws: why there is no link, as `/readyz` says it.
    func connect(shard index: Int) async throws(NotReady) -> (RedisLink, RedisURL) {
        let url = try await locateMaster(shard: index)
        lastGeneration += 1
        let generation = lastGeneration
        let timeout = configuration.connectTimeout
        do throws(RedisError) {
            let command = try await RedisConnection.connect(to: url, timeout: timeout)
            var opened: [RedisConnection] = [command]
            do throws(RedisError) {
                if !routing.isCluster {
                    // Sentinel may name a node that is no master (yet, or any more), and a
                    // single server's URL a replica: ROLE says (a Redis Cluster's map names masters).
                    if let role = try await masterRole(of: command), role != "master" {
                        throw .unreachable("\(url) is a \(Self.roleName(role)), not the master")
                    }
                }
                let publisher = configuration.minReplicas > 0
                    ? try await RedisConnection.connect(to: url, timeout: timeout) : command
                opened.append(publisher)
                let subscriber = try await RedisSubscriber.connect(to: url, timeout: timeout, onPush: { [weak self] push in
                    await self?.received(push, shard: index, generation: generation)
                })
                let link = RedisLink(command: command, subscriber: subscriber, publisher: publisher, generation: generation)
                do throws(RedisError) {
                    try await prepare(link, shard: index)
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
    /// loaded, this gateway's liveness written, the epoch checked, a running pause
    /// noted (and this gateway's mark owed to it).
    func prepare(_ link: RedisLink, shard index: Int) async throws(RedisError) {
        let command = link.command
        let keys = shards[index].keys
        let probe = keys.probeChannel(gateway: configuration.gatewayID)
        if routing.isCluster {
            try await link.subscriber.ssubscribe([probe], timeout: configuration.commandTimeout)
        } else {
            try await link.subscriber.subscribe([probe], timeout: configuration.commandTimeout)
        }
        for (name, text) in [("publish", ClusterScripts.publish), ("sync", ClusterScripts.sync),
                             ("raiseIDs", ClusterScripts.raiseIDs), ("liveness", ClusterScripts.liveness),
                             ("startFailoverPause", ClusterScripts.startFailoverPause),
                             ("pauseState", ClusterScripts.pauseState)] {
            // A refusal (e.g. OOM) is no reason to stay away: EVAL sends the text instead.
            let hash = try await tolerating(await command.command(["SCRIPT", "LOAD", text], timeout: configuration.commandTimeout))
            scriptHashes[name] = hash?.string
        }
        _ = try await writeLiveness(link, shard: index)
        try await checkEpoch(command, shard: index)
        if let runID = try await serverRunID(command), let epoch = shards[index].knownEpoch {
            if let last = shards[index].server, last.runID != runID, last.epoch == epoch {
                // Kept until a link is installed and the pause started: a link given up before
                // that (a relink asked for, the attempt abandoned) must not lose it.
                shards[index].restartedWithItsData = true
            }
            shards[index].server = (runID, epoch)
        }
        // A pause running here (another gateway found a failover or an empty restart): this
        // gateway owes its mark too, once its syncs on the new link are done.
        shards[index].raisePending = false
        shards[index].raiseFailed = false
        try await watchPause(link, shard: index, linking: true)
    }

    /// The master is another node than before (Sentinel or the cluster promoted a
    /// replica): it may lack the last publishes, so it is treated like a Redis that
    /// lost data — publishes pause until every gateway live on the shard has raised
    /// its topics' counters to the ids it holds (`ClusterEngine+Pause`; the first
    /// gateway to notice starts the pause, the others join it).
    func failedOverTo(_ master: RedisURL, link: RedisLink, shard index: Int) async {
        countFailover()
        configuration.log("\(shardName(index)): the master is now \(master) (failover); ids go on from what the gateways hold")
        await startFailoverPause(link, shard: index)
        try? await watchPause(link, shard: index)
    }

    /// The same server as at the last link, restarted with its data (its `run_id` changed,
    /// its epoch did not): it may have come back from a save older than its last
    /// publishes (an RDB snapshot, the second `appendfsync everysec` may lose), so its
    /// counters may be behind ids subscribers already had. Treated like a failover: the
    /// pause until every live gateway has raised its topics' counters.
    func restartedWithItsData(_ master: RedisURL, link: RedisLink, shard index: Int) async {
        configuration.log("\(shardName(index)): \(master) restarted (its run_id changed) and may have come back from an "
                          + "older save; ids go on from what the gateways hold")
        await startFailoverPause(link, shard: index)
        try? await watchPause(link, shard: index)
    }

    /// The server's `run_id` (`INFO server`); nil when refused (an ACL user without
    /// `INFO`, said once) or absent.
    func serverRunID(_ command: RedisConnection) async throws(RedisError) -> String? {
        let info: String?
        do {
            info = try await command.command(["INFO", "server"], timeout: configuration.commandTimeout).string
        } catch .server(let message) {
            if !infoRefusalLogged {
                infoRefusalLogged = true
                configuration.log("redis: INFO refused (\(message)); a restart of Redis from an older save is not noticed")
            }
            return nil
        }
        for line in (info ?? "").split(whereSeparator: \.isNewline) where line.hasPrefix("run_id:") {
            return String(line.dropFirst("run_id:".count))
        }
        return nil
    }

    /// The node's `ROLE`; nil when a single server refuses the command (an ACL user
    /// without `@dangerous`, a proxy that does not pass it on): its being a replica is
    /// then found by the `READONLY` a publish gets. Under Sentinel a refusal is an error.
    func masterRole(of command: RedisConnection) async throws(RedisError) -> String? {
        do {
            return try await Sentinel.role(of: command, timeout: configuration.commandTimeout)
        } catch .server(let message) {
            if case .sentinel = configuration.redis { throw .server(message) }
            if !roleRefusalLogged {
                roleRefusalLogged = true
                configuration.log("redis: ROLE refused (\(message)); a node turned replica is found by a publish's READONLY instead")
            }
            return nil
        }
    }

    /// How a log line names a `ROLE` answer ("slave" is Redis's older word).
    static func roleName(_ role: String) -> String { role == "slave" ? "replica" : role }

    /// Notices a Redis that lost its data (its epoch is gone or another): then, if this
    /// gateway knew the old one, publishes pause for 3 s (`sse:refloor`) while every
    /// gateway's syncs raise the counters of its topics to the ids it holds, so ids
    /// never go backwards, whichever gateway publishes first.
    func checkEpoch(_ command: RedisConnection, shard index: Int) async throws(RedisError) {
        let timeout = configuration.commandTimeout
        let keys = shards[index].keys
        var current = try await command.command(["GET", keys.epoch], timeout: timeout).string
        if current == nil {
            if shards[index].knownEpoch != nil {
                // The pause before the new epoch: a publish of a gateway that knew the old
                // one finds the epoch gone or another (refused: `ClusterScripts.publish`) or
                // the pause. (One that never knew the old epoch seeds it without a pause.)
                _ = try await command.command(["SET", keys.publishPause, "1", "PX", "3000"], timeout: timeout)
            }
            var generator = SystemRandomNumberGenerator()
            let fresh = String(generator.next() as UInt64, radix: 16)
            _ = try await command.command(["SET", keys.epoch, fresh, "NX"], timeout: timeout)
            current = try await command.command(["GET", keys.epoch], timeout: timeout).string
        }
        if let known = shards[index].knownEpoch, known != current {
            configuration.log("\(shardName(index)): Redis lost its data; ids go on from what the gateways hold")
            // Another epoch, not none: a gateway that never knew the old one seeded it, or
            // another Redis answers at this address; the pause too, unless one runs already.
            _ = try await command.command(["SET", keys.publishPause, "1", "PX", "3000", "NX"], timeout: timeout)
        }
        // Not when the shard's keys moved meanwhile (a slot map applied): its epoch is another's.
        if shards[index].keys == keys { shards[index].knownEpoch = current }
    }
}
