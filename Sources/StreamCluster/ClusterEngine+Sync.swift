import RedisClient
import StreamHub

/// Following topics: SUBSCRIBE, sync the mirror from Redis, apply messages, let go.
extension ClusterEngine {
    /// Sends what the followed topics need (SUBSCRIBEs in one batch, syncs
    /// pipelined), each time the doorbell rings, until the engine shuts down.
    func runWorker() async {
        await withDiscardingTaskGroup { group in
            for await _ in doorbell {
                guard let link, !isShutdown else { continue }
                let toSubscribe = followed.keys.filter { !unsubscribing.contains($0) && followed[$0]!.takeSubscribe() }
                if !toSubscribe.isEmpty {
                    group.addTask { await self.subscribeTopics(toSubscribe, link: link) }
                }
                // A bounded number at a time: after a reconnect with thousands of topics,
                // their windows must not all come back at once (and time the link out).
                for name in Array(followed.keys) where syncsInFlight < Self.maxSyncsInFlight {
                    guard let after = followed[name]?.takeSync() else { continue }
                    syncsInFlight += 1
                    group.addTask {
                        await self.syncTopic(name, after: after, link: link)
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

    private func subscribeTopics(_ topics: [String], link: RedisLink) async {
        do {
            // Batches keep one command's size reasonable after a reconnect with many topics.
            for start in stride(from: 0, to: topics.count, by: 1000) {
                let batch = topics[start..<min(start + 1000, topics.count)]
                try await link.subscriber.subscribe(batch.map { ClusterKeys(topic: $0).channel },
                                                    timeout: configuration.commandTimeout)
            }
        } catch {
            // The subscribed connection is unusable: start the link over.
            linkLost(link)
            return
        }
        guard self.link?.generation == link.generation else { return }
        for name in topics {
            _ = followed[name]?.subscribed()
        }
        doorbellRinger.yield()
    }

    private func syncTopic(_ topic: String, after: (afterState: UInt64, afterEvents: UInt64), link: RedisLink) async {
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
            guard self.link?.generation == link.generation else { return }
            switch error {
            case .closed, .timedOut:
                linkLost(link)
            case .server(let message) where message.hasPrefix("READONLY"):
                linkLost(link, because: .noMaster("the node in use became a replica"))
            default:
                configuration.log("redis: syncing \(topic) failed (\(error)); retrying")
                try? await Task.sleep(for: .milliseconds(100))
                guard self.link?.generation == link.generation else { return }
                _ = followed[topic]?.syncFailed()
                doorbellRinger.yield()
            }
            return
        }
        await apply(reply, to: topic, link: link)
    }

    /// What a sync brings to the hub, in order.
    private enum MirrorStep {
        case apply(ClusterMessage, at: ContinuousClock.Instant)
        case skip(after: UInt64, through: UInt64)
    }

    /// Brings the mirror to what Redis held: the newer state value; the events after
    /// the held id that the window still has, preceded by a skip (a `gap` for live
    /// subscribers) over those it no longer has; then the messages buffered meanwhile.
    private func apply(_ reply: SyncReply, to topic: String, link: RedisLink) async {
        guard self.link?.generation == link.generation, let entry = followed[topic] else { return }
        let now = ContinuousClock.now
        var steps: [MirrorStep] = []
        // Redis behind this gateway: it lost the topic's ids (came back empty, or a
        // key was evicted). Raise its counters so ids never go backwards here.
        let raise = reply.lastState < entry.lastState || reply.lastEvents < entry.lastEvents
            ? (entry.lastState, entry.lastEvents) : nil
        if let state = reply.state, state.id > entry.lastState {
            steps.append(.apply(ClusterMessage(channel: .state, id: state.id, event: state.event, data: state.data), at: now))
        }
        if reply.lastEvents > entry.lastEvents {
            let held = entry.lastEvents
            let maxAge = configuration.replayMaxAgeMilliseconds
            // Only the oldest leave by age (a window is ordered by id): an entry that looks
            // younger than one before it (Redis's clock stepped back) is still kept.
            let kept = reply.entries.filter { $0.id > held }.drop { reply.now - $0.publishedAt > maxAge }
            let firstKept = kept.first?.id ?? reply.lastEvents + 1
            if firstKept > held + 1 {
                steps.append(.skip(after: held, through: firstKept - 1))
            }
            for event in kept {
                let age = Duration.milliseconds(max(0, reply.now - event.publishedAt))
                steps.append(.apply(ClusterMessage(channel: .events, id: event.id, event: event.event, data: event.data),
                                    at: now - age))
            }
        }
        followed[topic]?.synced(state: max(reply.lastState, reply.state?.id ?? 0), events: reply.lastEvents)
        for step in steps {
            switch step {
            case .apply(let message, let at):
                _ = try? await hub.apply(topic: topic, channel: message.channel, data: message.data,
                                         event: message.event, id: message.id, at: at)
            case .skip(let after, let through):
                await hub.skipEvents(topic: topic, after: after, through: through)
            }
        }
        if let raise {
            let keys = ClusterKeys(topic: topic)
            _ = try? await runScript("raiseIDs", ClusterScripts.raiseIDs, link: link, keys: [keys.ids],
                                     arguments: [Array(String(raise.0).utf8), Array(String(raise.1).utf8)])
        }
        await applyPending(topic, generation: link.generation)
    }

    /// Applies the messages that came during a sync; the topic is live after them
    /// (its fences may be reached), or syncs again if they show ids missing. Stops
    /// if the link of `generation` is lost meanwhile (the next link's sync takes over).
    func applyPending(_ topic: String, generation: UInt64) async {
        while shard.generation == generation, let action = followed[topic]?.nextPending() {
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

    /// A message from the subscribed connection (in arrival order; the reader waits
    /// for this to return).
    func received(_ message: RedisMessage, generation: UInt64) async {
        guard generation == shard.generation, !isShutdown else { return }
        if message.channel == probeChannelBytes {
            shard.probesSeen = max(shard.probesSeen, UInt64(String(decoding: message.payload, as: UTF8.self)) ?? 0)
            return
        }
        guard let topic = ClusterKeys.topic(ofChannel: message.channel), followed[topic] != nil,
              let decoded = ClusterMessage(payload: message.payload) else { return }
        switch followed[topic]!.received(decoded) {
        case .apply(let next):
            _ = try? await hub.apply(topic: topic, channel: next.channel, data: next.data, event: next.event, id: next.id)
            fencesMayBeReached(topic)
        case .sync:
            doorbellRinger.yield()
        case .none, .subscribe, .runSync, .live:
            break
        }
    }

    private var probeChannelBytes: [UInt8] { ClusterKeys.probeChannel(gateway: configuration.gatewayID) }

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
                await applyPending(name, generation: shard.generation)
            }
        }
        if !gone.isEmpty, let link {
            unsubscribing.formUnion(gone)
            try? await link.subscriber.unsubscribe(gone.map { ClusterKeys(topic: $0).channel },
                                                   timeout: configuration.commandTimeout)
            if self.link?.generation == link.generation { unsubscribing.subtract(gone) }
            doorbellRinger.yield()
        }
        // The hub forgets no topic itself here (`forgetsIdleTopics` is off): this only prunes by age.
        await hub.sweep()
    }
}
