extension Hub {
    /// Registers one subscriber of several topics' `channel` (a several-topic stream)
    /// and queues what it must see first, all in this one actor call, so the snapshot
    /// → live guarantee holds for every topic: on `.state` the current value of each
    /// topic that has one, in `topics` order; on `.events` each topic's replay after
    /// its `resumeAfter` position (nil, or newer than the topic's last id: nothing),
    /// a `gap` first where the window no longer reaches.
    ///
    /// The subscriber is one core with one queue, in the table of each topic: on
    /// `.events` its limit counts all topics together (plus what it resumes with); on
    /// `.state` at most one value per topic waits. Its frames are the shared JSON
    /// frames with their marks (`TopicsSubscription`). After `shutdown()` the returned
    /// subscription is already finished with `.shutdown`.
    ///
    /// - Precondition: `topics` is not empty and has no duplicate; `resumeAfter`, when
    ///   given, has one position per topic.
    public func subscribe(topics names: [String], channel: Channel, resumeAfter: [UInt64?]? = nil) -> TopicsSubscription {
        precondition(!names.isEmpty && Set(names).count == names.count, "one or more distinct topics")
        precondition(resumeAfter == nil || resumeAfter?.count == names.count, "one position per topic")
        drainRemovals()
        let now = configuration.now()
        let key = SubscriberKey(topics: names, channel: channel, id: subscriberIDs.next())
        guard !isShutdown else {
            let core = SubscriberCore(key: key, finished: .shutdown, now: now, counters: counters)
            return TopicsSubscription(core: core, startPositions: Array(repeating: 0, count: names.count))
        }
        counters.subscriberJoined(channel)
        let core = SubscriberCore(key: key, mode: Self.topicsQueueMode(channel, configuration), marked: true,
                                  now: now, counters: counters, hub: self)
        let starts = join(core, slots: Array(names.indices), resumeAfter: resumeAfter, now: now)
        return TopicsSubscription(core: core, startPositions: starts)
    }

    /// The queue of a several-topic subscriber before its first frames: `.latestPerSlot`
    /// on `.state`; on `.events` the usual limit, widened by what it starts with.
    static func topicsQueueMode(_ channel: Channel, _ configuration: HubConfiguration) -> SubscriberQueue.Mode {
        switch channel {
        case .state: .latestPerSlot
        case .events: .bounded(limit: configuration.eventsQueueLimit)
        }
    }

    /// Registers `core` (a several-topic subscriber, counted as joined) in the
    /// tables of its topics at `slots` (all of them, or the ones a `ShardedHub` keeps
    /// here) and queues what it must see first in each; returns the start position
    /// of each of those slots, in `slots` order. One actor call, so the snapshot →
    /// live guarantee holds for each of these topics. A core already finished (an
    /// overflow in another shard) is not registered; after `shutdown()` it is finished.
    func join(_ core: SubscriberCore, slots: [Int], resumeAfter: [UInt64?]?, now: ContinuousClock.Instant) -> [UInt64] {
        let names = core.key.topics
        let channel = core.key.channel
        guard !isShutdown else {
            core.finish(.shutdown, fromConsumer: false)
            return slots.map { _ in 0 }
        }
        // Finished meanwhile by another shard (too slow there): nothing to register.
        guard core.finishReason == nil else { return slots.map { _ in 0 } }
        var initial: [([UInt8], FrameMark?)] = []
        var starts: [UInt64] = []
        var gaps = 0
        starts.reserveCapacity(slots.count)
        for slot in slots {
            let name = names[slot]
            withTopic(name) { topic in
                switch channel {
                case .state:
                    starts.append(topic.stateLastID)
                    if let (frame, mark) = topic.topicsStateFrame(name: name, slot: slot) { initial.append((frame, mark)) }
                case .events:
                    let last = topic.eventsLastID
                    let position = resumeAfter?[slot].flatMap { $0 <= last ? $0 : nil }
                    starts.append(position ?? last)
                    let replay = topic.topicsReplay(after: position, name: name, slot: slot, now: now)
                    initial += replay.frames.map { ($0.0, $0.1) }
                    if replay.gap { gaps += 1 }
                }
                topic.insert(core, slot: slot)
            }
        }
        // What it starts with comes on top of the limit (as for one topic), in one step
        // with its queuing: live frames another shard queues meanwhile cannot crowd it out.
        let queued = core.pushFirst(initial, now: now)
        counters.queued(channel, frames: queued)
        if queued > 0 { counters.gapQueued(gaps) }
        return starts
    }

    /// `join` for a `ShardedHub`, on this hub's executor.
    func join(_ core: SubscriberCore, slots: [Int], resumeAfter: [UInt64?]?) -> [UInt64] {
        drainRemovals()
        return join(core, slots: slots, resumeAfter: resumeAfter, now: configuration.now())
    }
}
