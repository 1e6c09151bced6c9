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
        guard self.link?.generation == link.generation, var entry = followed[topic], entry.phase == .syncing else { return }
        let now = ContinuousClock.now
        var steps: [MirrorStep] = []
        // Redis behind this gateway: it lost the topic's ids (came back empty, or a
        // key was evicted). Raise its counters so ids never go backwards here.
        let floor = reply.lastState < entry.lastState || reply.lastEvents < entry.lastEvents
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
        entry.synced(state: max(reply.lastState, reply.state?.id ?? 0), events: reply.lastEvents)
        followed[topic] = entry
        for step in steps {
            switch step {
            case .apply(let message, let at):
                _ = try? await hub.apply(topic: topic, channel: message.channel, data: message.data,
                                         event: message.event, id: message.id, at: at)
            case .skip(let after, let through):
                await hub.skipEvents(topic: topic, after: after, through: through)
            }
        }
        if let floor {
            let keys = ClusterKeys(topic: topic)
            _ = try? await runScript("floor", ClusterScripts.floor, link: link, keys: [keys.ids],
                                     arguments: [Array(String(floor.0).utf8), Array(String(floor.1).utf8)])
        }
        await drainBuffer(topic)
    }

    /// Applies the messages buffered during a sync; the topic is live after them,
    /// or syncs again if they show ids missing.
    func drainBuffer(_ topic: String) async {
        while var entry = followed[topic] {
            let (message, needsSync) = entry.nextBuffered()
            followed[topic] = entry
            if let message {
                _ = try? await hub.apply(topic: topic, channel: message.channel, data: message.data,
                                         event: message.event, id: message.id)
                continue
            }
            if needsSync {
                doorbellRinger.yield()
            } else {
                resumeWaiters(topic)
            }
            return
        }
    }

    /// A message from the subscribed connection (in arrival order; the reader waits
    /// for this to return).
    func received(_ message: RedisMessage, generation: UInt64) async {
        guard generation == shard.generation, !isShutdown else { return }
        if message.channel == probeChannelBytes {
            shard.probesSeen = max(shard.probesSeen, UInt64(String(decoding: message.payload, as: UTF8.self)) ?? 0)
            readiness.probeReturned(generation: generation)
            return
        }
        guard let topic = ClusterKeys.topic(ofChannel: message.channel), followed[topic] != nil,
              let decoded = ClusterMessage(payload: message.payload) else { return }
        switch followed[topic]!.received(decoded) {
        case .apply(let next):
            _ = try? await hub.apply(topic: topic, channel: next.channel, data: next.data, event: next.event, id: next.id)
            resumeWaiters(topic)
        case .sync:
            doorbellRinger.yield()
        case .none, .subscribe:
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
        for name in Array(followed.keys) {
            guard counts[name] == nil, followed[name]!.isIdle else {
                followed[name]!.unwantedSince = nil
                continue
            }
            let since = followed[name]!.unwantedSince ?? now
            followed[name]!.unwantedSince = since
            guard now - since >= configuration.followLinger else { continue }
            followed[name]!.leave()
            leaving.append(name)
        }
        var gone: [String] = []
        for name in leaving {
            let forgotten = await hub.forgetUnsubscribed(topic: name)
            guard var entry = followed[name] else { continue }
            if forgotten, entry.pendingSubscribers == 0, entry.waiters.isEmpty {
                followed[name] = nil
                gone.append(name)
            } else if forgotten {
                if entry.forgottenButWanted() == .sync { doorbellRinger.yield() }
                followed[name] = entry
            } else if entry.phase == .leaving {
                _ = entry.stayed()
                followed[name] = entry
                await drainBuffer(name)
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
