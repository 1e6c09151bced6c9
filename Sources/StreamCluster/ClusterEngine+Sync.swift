import RedisClient
import StreamHub

/// Following topics: SUBSCRIBE, sync the mirror from Redis, apply messages, let go.
extension ClusterEngine {
    /// Sends what the followed topics and new subscribers need (SUBSCRIBEs in one
    /// batch, syncs pipelined, the round of fence reads), each time the doorbell rings,
    /// until the engine shuts down.
    func runWorker() async {
        await withDiscardingTaskGroup { group in
            for await _ in doorbell {
                guard !isShutdown else { continue }
                if let round = fenceReads.takeRound() {
                    group.addTask { await self.readFenceRound(round.waiters, topics: round.topics) }
                }
                // On Redis Cluster, subscribes wait for a refresh asked for (a channel moved):
                // the map before it may name the old owner.
                let mapSettled = mapServed >= mapRequests
                var toSubscribe: [Int: [String]] = [:]
                for name in followed.keys where !unsubscribing.contains(name) && mapSettled {
                    guard let index = routing.shard(of: name), link(shard: index) != nil,
                          followed[name]!.takeSubscribe() else { continue }
                    topicShard[name] = index
                    toSubscribe[index, default: []].append(name)
                }
                for (index, topics) in toSubscribe {
                    guard let link = link(shard: index) else { continue }
                    group.addTask { await self.subscribeTopics(topics, shard: index, link: link) }
                }
                // A bounded number at a time: after a reconnect with thousands of topics,
                // their windows must not all come back at once (and time the link out).
                for name in Array(followed.keys) where syncsInFlight < Self.maxSyncsInFlight {
                    guard let index = topicShard[name], let link = link(shard: index),
                          let after = followed[name]?.takeSync() else { continue }
                    syncsInFlight += 1
                    group.addTask {
                        await self.syncTopic(name, after: after, shard: index, link: link)
                        await self.syncFinished()
                    }
                }
            }
        }
    }

    static var maxSyncsInFlight: Int { 32 }

    private func syncFinished() {
        syncsInFlight -= 1
        doorbellRinger.yield()  // Topics left waiting for a free slot.
    }

    /// SUBSCRIBEs the topics' channels on the shard's subscriber connection; on Redis
    /// Cluster SSUBSCRIBE, one command per slot. A `MOVED` (the map was stale) sends
    /// those topics back to subscribing after a refresh; any other failure ends the link.
    private func subscribeTopics(_ topics: [String], shard index: Int, link: RedisLink) async {
        let timeout = configuration.commandTimeout
        var confirmed: [String] = []
        var redirected: [String] = []
        do {
            if routing.isCluster {
                for group in HashSlot.grouping(topics.map { Array($0.utf8) }) {
                    let names = group.keys.map { String(decoding: $0, as: UTF8.self) }
                    do throws(RedisError) {
                        try await link.subscriber.ssubscribe(names.map { ClusterKeys(topic: $0).shardedChannel }, timeout: timeout)
                        confirmed += names
                        catchUpProgress &+= 1
                    } catch {
                        guard ClusterRedirection(error) != nil || ClusterRefusal(error) != nil else { throw error }
                        redirected += names
                    }
                }
            } else {
                // Batches keep one command's size reasonable after a reconnect with many topics.
                for start in stride(from: 0, to: topics.count, by: 1000) {
                    let batch = topics[start..<min(start + 1000, topics.count)]
                    let channels = batch.map { ClusterKeys(topic: $0).channel(database: configuration.redis.database) }
                    try await link.subscriber.subscribe(channels, timeout: timeout)
                    catchUpProgress &+= 1
                }
                confirmed = topics
            }
        } catch {
            // The subscribed connection is unusable: start the link over.
            linkLost(link, shard: index, because: .unreachable("subscribing its topics failed: \(error)"))
            return
        }
        guard self.link(shard: index)?.generation == link.generation else { return }
        for name in confirmed where topicShard[name] == index {
            _ = followed[name]?.subscribed()
        }
        for name in redirected where topicShard[name] == index {
            resubscribe(name)
        }
        if !redirected.isEmpty { requestMapRefresh() }
        doorbellRinger.yield()
    }

    /// The topic subscribes again (on the shard the routing names then) and syncs from
    /// where its mirror stands; its fences keep waiting (they hold: the ids
    /// are in the topic's keys, which moved with its slot).
    func resubscribe(_ topic: String) {
        guard let entry = followed[topic] else { return }
        if case .leaving = entry.phase { return }
        followed[topic]?.slotMoved()
        topicShard[topic] = nil
        doorbellRinger.yield()
    }

    private func syncTopic(_ topic: String, after: (afterState: UInt64, afterEvents: UInt64), shard index: Int,
                           link: RedisLink) async {
        let keys = ClusterKeys(topic: topic)
        let reply: SyncReply
        do throws(RedisError) {
            let value = try await runScript("sync", ClusterScripts.sync, link: link,
                                            keys: [keys.ids, keys.state, keys.events],
                                            arguments: [Array(String(after.afterState).utf8), Array(String(after.afterEvents).utf8)])
            guard let decoded = SyncReply(value) else {
                throw RedisError.protocolError("unexpected sync reply for \(topic)")
            }
            reply = decoded
        } catch {
            guard self.link(shard: index)?.generation == link.generation, topicShard[topic] == index else { return }
            switch error {
            case .closed, .timedOut:
                linkLost(link, shard: index, because: .unreachable("a topic's sync failed: \(error)"))
            case .server(let message) where message.hasPrefix("READONLY") && !routing.isCluster:
                linkLost(link, shard: index, because: .noMaster("the node in use became a replica"))
            case _ where routing.isCluster && ClusterRedirection(error)?.kind == .moved:
                // The slot has another owner: subscribe there (after a refresh), then sync.
                resubscribe(topic)
                requestMapRefresh()
            default:
                if routing.isCluster, ClusterRefusal(error) != nil { requestMapRefresh() }
                // ASK and TRYAGAIN (a slot migrating) end within milliseconds: tried again.
                configuration.log("redis: syncing \(topic) failed (\(error)); retrying")
                try? await Task.sleep(for: .milliseconds(100))
                guard self.link(shard: index)?.generation == link.generation, topicShard[topic] == index else { return }
                _ = followed[topic]?.syncFailed()
                doorbellRinger.yield()
            }
            return
        }
        await apply(reply, to: topic, shard: index, link: link)
    }

    /// What a sync brings to the hub, in order.
    private enum MirrorStep {
        case apply(ClusterMessage, at: ContinuousClock.Instant)
        case skip(after: UInt64, through: UInt64)
    }

    /// Brings the mirror to what Redis held: the newer state value; the events after
    /// the held id that the window still has, with a skip (a `gap` for live
    /// subscribers) over each run of ids it does not have; then the messages buffered meanwhile.
    private func apply(_ reply: SyncReply, to topic: String, shard index: Int, link: RedisLink) async {
        guard self.link(shard: index)?.generation == link.generation, topicShard[topic] == index,
              let entry = followed[topic] else { return }
        let now = ContinuousClock.now
        var steps: [MirrorStep] = []
        // Redis behind this gateway: it lost the topic's ids (came back empty, a key was
        // evicted, or a promoted replica lacks the last publishes, this gateway's
        // acknowledged ones included). Raise its counters so ids never go backwards here.
        let lost = entry.acknowledgedAtSync
        let mustHold = (state: max(entry.lastState, lost.state), events: max(entry.lastEvents, lost.events))
        let raise = reply.lastState < mustHold.state || reply.lastEvents < mustHold.events ? mustHold : nil
        if let state = reply.state, state.id > entry.lastState {
            steps.append(.apply(ClusterMessage(channel: .state, id: state.id, event: state.event, data: state.data), at: now))
        }
        // Where the mirror's events end: Redis's counter, or a newer entry of its window
        // (the counter was lost and raised below it: the next publish goes past the entry).
        var mirrored = reply.lastEvents
        if reply.lastEvents > entry.lastEvents {
            let held = entry.lastEvents
            let maxAge = configuration.replayMaxAgeMilliseconds
            // Only the oldest leave by age (a window is ordered by id): an entry that looks
            // younger than one before it (Redis's clock stepped back) is still kept.
            let kept = reply.entries.filter { $0.id > held }.drop { reply.now - $0.publishedAt > maxAge }
            // Every id missing is skipped (a `gap`): those gone from the window before the
            // first kept, those between two entries (a raise after a failover lost values
            // stores none; a fresh mirror must not replay across them as if nothing was
            // lost), and those the counter passed after the newest, so the mirror ends
            // where the counter is.
            var previous = held
            for event in kept {
                if event.id > previous + 1 {
                    steps.append(.skip(after: previous, through: event.id - 1))
                }
                let age = Duration.milliseconds(max(0, reply.now - event.publishedAt))
                steps.append(.apply(ClusterMessage(channel: .events, id: event.id, event: event.event, data: event.data),
                                    at: now - age))
                previous = event.id
            }
            if previous < reply.lastEvents {
                steps.append(.skip(after: previous, through: reply.lastEvents))
            }
            mirrored = max(mirrored, previous)
        }
        followed[topic]?.synced(state: max(reply.lastState, reply.state?.id ?? 0), events: mirrored)
        catchUpProgress &+= 1
        for step in steps {
            switch step {
            case .apply(let message, let at):
                _ = try? await hub.apply(topic: topic, channel: message.channel, data: message.data,
                                         event: message.event, id: message.id, at: at)
            case .skip(let after, let through):
                await hub.skipEvents(topic: topic, after: after, through: through)
            }
        }
        var raisedPastAcknowledged = false
        if let raise {
            let keys = ClusterKeys(topic: topic)
            do {
                _ = try await runScript("raiseIDs", ClusterScripts.raiseIDs, link: link, keys: [keys.ids],
                                        arguments: [Array(String(raise.0).utf8), Array(String(raise.1).utf8)])
                raisedPastAcknowledged = lost.state > reply.lastState || lost.events > reply.lastEvents
            } catch {
                // Not raised: this gateway must not mark itself raised for a running pause
                // (which then lasts its time to live); a lost link syncs again anyway.
                if let index = topicShard[topic], shards[index].generation == link.generation {
                    shards[index].raiseFailed = true
                }
            }
        }
        await applyPending(topic, generation: link.generation)
        // This gateway's publishes acknowledged before the sync was sent that Redis no
        // longer has (stored on a master that failed over) are gone. Not skipped here: until
        // the raise, another gateway could be given those ids for values Redis does hold.
        // The next sync, after the raise, applies those and skips the rest (a `gap`).
        if raisedPastAcknowledged, followed[topic]?.resync() == .sync { doorbellRinger.yield() }
    }

    /// Applies the messages that came during a sync; the topic is live after them
    /// (its fences may be reached), or syncs again if they show ids missing. Stops
    /// if the link of `generation` is lost meanwhile (the next link's sync takes over).
    func applyPending(_ topic: String, generation: UInt64) async {
        while let index = topicShard[topic], shards[index].generation == generation,
              let action = followed[topic]?.nextPending() {
            switch action {
            case .apply(let message):
                _ = try? await hub.apply(topic: topic, channel: message.channel, data: message.data,
                                         event: message.event, id: message.id)
            case .sync:
                doorbellRinger.yield()
                return
            case .live:
                fencesMayBeReached(topic)
                return
            case .none, .subscribe, .runSync:
                return
            }
        }
    }

    /// Lets go of topics nobody here has subscribed to for `followLinger` (UNSUBSCRIBE,
    /// the hub forgets its copy), then prunes the windows by age.
    public func sweep() async {
        guard !isShutdown else { return }
        let counts = await hub.subscriberCounts()
        var leaving: [String] = []
        let now = ContinuousClock.now
        for name in Array(followed.keys)
        where followed[name]!.mayLeave(subscribed: counts[name] != nil, now: now, linger: configuration.followLinger) {
            followed[name]!.leave()
            leaving.append(name)
        }
        var gone: [String] = []
        for name in leaving {
            let forgotten = await hub.forgetUnsubscribed(topic: name)
            guard let entry = followed[name] else { continue }
            if forgotten, entry.arriving == 0, entry.fences.isEmpty {
                followed[name] = nil
                gone.append(name)
            } else if forgotten {
                if followed[name]?.forgottenButWanted() == .sync { doorbellRinger.yield() }
            } else if case .leaving = entry.phase {
                followed[name]?.stayed()
                await applyPending(name, generation: topicShard[name].map { shards[$0].generation } ?? 0)
            }
        }
        var goneByShard: [Int: [String]] = [:]
        for name in gone {
            if let index = topicShard.removeValue(forKey: name) { goneByShard[index, default: []].append(name) }
        }
        for (index, names) in goneByShard {
            guard let link = link(shard: index) else { continue }
            unsubscribing.formUnion(names)
            if routing.isCluster {
                for group in HashSlot.grouping(names.map { Array($0.utf8) }) {
                    // A MOVED here: the slot moved and its push already ended the subscription.
                    try? await link.subscriber.sunsubscribe(group.keys.map {
                        ClusterKeys(topic: String(decoding: $0, as: UTF8.self)).shardedChannel
                    }, timeout: configuration.commandTimeout)
                }
            } else {
                let channels = names.map { ClusterKeys(topic: $0).channel(database: configuration.redis.database) }
                try? await link.subscriber.unsubscribe(channels, timeout: configuration.commandTimeout)
            }
            if self.link(shard: index)?.generation == link.generation { unsubscribing.subtract(names) }
            doorbellRinger.yield()
        }
        // The hub forgets no topic itself here (`forgetsIdleTopics` is off): this only prunes by age.
        await hub.sweep()
    }
}
