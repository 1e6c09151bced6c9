extension Hub {
    /// Registers one subscriber of `slots`' `channel` and queues what it must see
    /// first, all in this one actor call, so the snapshot → live guarantee holds for
    /// every topic: on `.state` the current value of each topic that has one, in slot
    /// order; on `.events` each topic's replay after its `resumeAfter` position (nil,
    /// or newer than the topic's last id: nothing), a `gap` first where the window no
    /// longer reaches.
    ///
    /// The subscriber is one core with one queue, in the table of each topic: on
    /// `.events` its limit counts all topics together, plus what it starts with (a
    /// resume may hold its replay on top of the limit, so a window longer than the
    /// limit still resumes); on `.state` at most one value per topic waits. Its frames
    /// are as `slots.format` says. After `shutdown()` the returned subscription is
    /// already finished with `.shutdown`.
    ///
    /// - Precondition: `resumeAfter`, when given, has one position per slot.
    public func subscribe(topics slots: TopicSlots, channel: Channel, resumeAfter: [UInt64?]? = nil) -> Subscription {
        precondition(resumeAfter == nil || resumeAfter?.count == slots.names.count, "one position per topic")
        drainRemovals()
        let now = configuration.now()
        let key = SubscriberKey(slots: slots, channel: channel, id: subscriberIDs.next())
        guard !isShutdown else {
            let core = SubscriberCore(key: key, finished: .shutdown, now: now, counters: counters)
            return Subscription(core: core, startPositions: Array(repeating: 0, count: slots.names.count))
        }
        counters.subscriberJoined(channel)
        let core = SubscriberCore(key: key, mode: slots.queueMode(channel, limit: configuration.eventsQueueLimit),
                                  now: now, counters: counters, hub: self)
        let starts = join(core, slots: Array(slots.names.indices), resumeAfter: resumeAfter, now: now)
        return Subscription(core: core, startPositions: starts)
    }

    /// A one-topic stream of the topic's own frames: `subscribe(topics: .single(topic)…)`.
    public nonisolated func subscribe(topic: String, channel: Channel, lastEventID: UInt64? = nil) async -> Subscription {
        await subscribe(topics: .single(topic), channel: channel, resumeAfter: [lastEventID])
    }

    /// Registers `core` (counted as joined) in the tables of its topics at `slots`
    /// (all of them, or the ones a `ShardedHub` keeps here) and queues what it must
    /// see first in each; returns the start position of each of those slots, in
    /// `slots` order. One actor call, so the snapshot → live guarantee holds for each
    /// of these topics. A core already finished (an overflow in another shard) is not
    /// registered; after `shutdown()` it is finished.
    func join(_ core: SubscriberCore, slots: [Int], resumeAfter: [UInt64?]?, now: ContinuousClock.Instant) -> [UInt64] {
        let set = core.key.slots
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
            withTopic(set.names[slot]) { topic in
                switch channel {
                case .state:
                    starts.append(topic.stateLastID)
                    if let first = topic.stateSnapshot(slot: slot, of: set) { initial.append(first) }
                case .events:
                    let last = topic.eventsLastID
                    let position = resumeAfter?[slot].flatMap { $0 <= last ? $0 : nil }
                    starts.append(position ?? last)
                    let replay = topic.replay(after: position, slot: slot, of: set, now: now)
                    initial += replay.frames
                    gaps += replay.gaps
                }
                topic.insert(core, slot: slot)
            }
        }
        // What it starts with comes on top of the limit, in one step with its queuing:
        // live frames another shard queues meanwhile cannot crowd it out.
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
