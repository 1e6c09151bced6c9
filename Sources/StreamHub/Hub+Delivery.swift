/// Fan-out of one frame to a topic's subscribers, single-topic and several-topic,
/// and what an overflow leaves to clean up.
extension Hub {
    /// What one delivery did: frames queued, subscribers overflowed (already removed
    /// from the topic delivered to), and the several-topic ones among them, which
    /// must still leave their other topics.
    struct Delivery {
        var queued = 0
        var overflows = 0
        var overflowedTopics: [SubscriberKey] = []
    }

    /// Pushes `frame` to every live single-topic subscriber of the channel, and the
    /// frame `topicFrame` makes (called at most once, only when there are any) with
    /// the id it names to every several-topic one.
    func deliver(_ frame: [UInt8], on channel: Channel, of topic: inout Topic, now: ContinuousClock.Instant,
                 topicFrame: () -> (frame: [UInt8], id: UInt64)) -> Delivery {
        var delivery = Delivery()
        var overflows: [(SubscriberCore, SubscriberQueue.Finish)] = []
        func count(_ action: SubscriberQueue.PushAction, _ core: SubscriberCore) {
            switch action {
            case .queued(let wake):
                delivery.queued += 1
                wake?.resume()
            case .overflow(let finish):
                overflows.append((core, finish))
            case .dropped:
                break  // Finished by its consumer; its key is in the inbox.
            }
        }
        for core in topic.subscribers(channel).values {
            count(core.push(frame, now: now), core)
        }
        let several = topic.topicsSubscribers(channel)
        if !several.isEmpty {
            let (shared, id) = topicFrame()
            for entry in several.values {
                count(entry.core.push(shared, mark: FrameMark(slot: entry.slot, id: id), now: now), entry.core)
            }
        }
        for (core, finish) in overflows {
            overflowed(core, finish, in: &topic)
            if !core.key.moreTopics.isEmpty { delivery.overflowedTopics.append(core.key) }
        }
        delivery.overflows = overflows.count
        return delivery
    }

    /// Counts a delivery to `name` and lets go of what its overflows left behind:
    /// several-topic subscribers leave their other topics, idle topics are forgotten.
    func finishDelivery(_ delivery: Delivery, to name: String, on channel: Channel, now: ContinuousClock.Instant) {
        counters.queued(channel, frames: delivery.queued)
        guard delivery.overflows > 0 else { return }
        forgetIfIdle(name, now: now)
        for key in delivery.overflowedTopics {
            removeEverywhere(key, now: now)
        }
    }

    /// Takes `key` out of the tables of every one of its topics at once.
    func removeEverywhere(_ key: SubscriberKey, now: ContinuousClock.Instant) {
        topics[key.topic]?.remove(key)
        forgetIfIdle(key.topic, now: now)
        for name in key.moreTopics {
            topics[name]?.remove(key)
            forgetIfIdle(name, now: now)
        }
    }

    /// Removes a subscriber that just overflowed, counts it, and reports the finish.
    func overflowed(_ core: SubscriberCore, _ finish: SubscriberQueue.Finish, in topic: inout Topic) {
        topic.remove(core.key)
        counters.slowSubscriberDisconnected()
        core.complete(finish)
    }
}
