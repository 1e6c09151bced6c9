import RedisClient
import StreamHub

/// Each shard's link's life: connect (retrying with back-off while its Redis is
/// unreachable), watch it (`ClusterEngine+Monitor`: a probe through pub/sub every
/// second, liveness and subscriber counts), and on loss fail what waits on that
/// shard and start over.
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
            let restarted = shards[index].restartedWithItsData
            shards[index].restartedWithItsData = false
            if failedOver {
                await failedOverTo(master, link: link, shard: index)
            } else if restarted {
                await restartedWithItsData(master, link: link, shard: index)
            }
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
        link.command.onClose { [weak self] end in self?.connectionClosed(generation: generation, because: end); wakeup.signal() }
        link.subscriber.onClose { [weak self] end in self?.connectionClosed(generation: generation, because: end); wakeup.signal() }
        link.publisher.onClose { [weak self] end in self?.connectionClosed(generation: generation, because: end); wakeup.signal() }
        // Every followed topic of the shard subscribes again and syncs from where its mirror stands.
        doorbellRinger.yield()
    }

    /// The shard's link is gone: not ready, its topics' waiters refused, its topics to subscribe again.
    func linkLost(_ lost: RedisLink, shard index: Int, because reason: NotReady = .unreachable("the connection was lost")) {
        guard link(shard: index)?.generation == lost.generation else {
            lost.close()
            return
        }
        // The cause first: the closes below then find the shard down and do not stand for it.
        readiness.down(shard: index, reason)
        if lost.isOpen {
            configuration.log("\(shardName(index)): link \(lost.generation) given up: \(readiness.reason(shard: index) ?? reason.text)")
        }
        lost.close()
        shards[index].phase = shards[index].phase.after(.lost(generation: lost.generation))
        let names = followed.keys.filter { topicShard[$0] == index || routing.shard(of: $0) == index }
        for name in names { topicShard[name] = nil }
        topicsLostTheLink(names)
    }

    /// Runs a script by hash, sending its text when Redis does not have it (a Redis
    /// restarted since `SCRIPT LOAD`, or a cluster node never asked, answers `NOSCRIPT`);
    /// `asking`: after `ASKING`, in one write (a slot being imported by that node).
    func runScript(_ name: String, _ text: String, link: RedisLink, on connection: RedisConnection? = nil,
                   keys: [String], arguments: [[UInt8]], asking: Bool = false) async throws(RedisError) -> RedisValue {
        var scriptArguments = RedisArguments()
        scriptArguments.append(keys.count)
        for key in keys { scriptArguments.append(key) }
        for argument in arguments { scriptArguments.append(argument) }
        return try await Self.evaluate(text, hash: scriptHashes[name], on: connection ?? link.command,
                                       scriptArguments: scriptArguments, asking: asking,
                                       timeout: configuration.commandTimeout)
    }

    /// `runScript` off the engine (a publish on its caller's loop): `hash` is the script's
    /// from `scriptHashes`, read on the engine; `scriptArguments`: the key count, the keys
    /// and the arguments. `cancellable` false: sent and answered even if the calling
    /// task is cancelled (a batch of publishes, sent on behalf of others too).
    nonisolated(nonsending) static func evaluate(_ text: String, hash: String?, on connection: RedisConnection,
                                                 scriptArguments: RedisArguments, asking: Bool, cancellable: Bool = true,
                                                 timeout: Duration) async throws(RedisError) -> RedisValue {
        func command(_ name: String, _ script: String) -> RedisArguments {
            var command = RedisArguments(reservingCapacity: scriptArguments.byteCount + script.utf8.count + 32)
            command.append(name)
            command.append(script)
            command.append(contentsOf: scriptArguments)
            return command
        }
        nonisolated(nonsending) func send(_ command: RedisArguments) async throws(RedisError) -> RedisValue {
            if asking { return try await connection.commandAfterAsking(command, timeout: timeout) }
            return cancellable ? try await connection.command(command, timeout: timeout)
                               : try await connection.commandIgnoringCancellation(command, timeout: timeout)
        }
        if let hash {
            do {
                return try await send(command("EVALSHA", hash))
            } catch .server(let message) where message.hasPrefix("NOSCRIPT") {
                // Fall through to EVAL, which also caches the script again.
            }
        }
        return try await send(command("EVAL", text))
    }
}
