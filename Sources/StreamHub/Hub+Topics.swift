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
        lastSubscriberID += 1
        let key = SubscriberKey(topics: names, channel: channel, id: lastSubscriberID)
        guard !isShutdown else {
            let core = SubscriberCore(key: key, finished: .shutdown, now: now, counters: counters)
            return TopicsSubscription(core: core, startPositions: Array(repeating: 0, count: names.count))
        }
        counters.subscriberJoined(channel)
        var initial: [([UInt8], FrameMark)] = []
        var starts: [UInt64] = []
        starts.reserveCapacity(names.count)
        for (slot, name) in names.enumerated() {
            withTopic(name) { topic in
                switch channel {
                case .state:
                    starts.append(topic.stateLastID)
                    if let frame = topic.topicsStateFrame(name: name, slot: slot) { initial.append(frame) }
                case .events:
                    let last = topic.eventsLastID
                    let position = resumeAfter?[slot].flatMap { $0 <= last ? $0 : nil }
                    starts.append(position ?? last)
                    let replay = topic.topicsReplay(after: position, name: name, slot: slot, now: now)
                    initial += replay.frames
                    if replay.gap { counters.gapQueued() }
                }
            }
        }
        let mode: SubscriberQueue.Mode = switch channel {
        case .state: .latestPerSlot
        case .events: .bounded(limit: configuration.eventsQueueLimit + initial.count)
        }
        let core = SubscriberCore(key: key, mode: mode, marked: true, now: now, counters: counters, inbox: inbox, hub: self)
        for (slot, name) in names.enumerated() {
            withTopic(name) { $0.insert(core, slot: slot) }
        }
        for (frame, mark) in initial {
            // Nobody can be parked yet, and the limit leaves room for all of it.
            guard case .queued = core.push(frame, mark: mark, now: now) else {
                preconditionFailure("a new subscriber's first frames must fit its queue")
            }
        }
        counters.queued(channel, frames: initial.count)
        return TopicsSubscription(core: core, startPositions: starts)
    }
}
