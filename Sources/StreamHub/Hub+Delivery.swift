/// Fan-out of one frame to a topic's subscribers, plain and tagged,
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

    /// Pushes `frame` (the topic's own) to every live subscriber of the channel that
    /// takes it as it is, and the frame `taggedFrame` makes (called at most once, only
    /// when there is one) with the id it names, marked with its slot, to every
    /// subscriber of tagged frames.
    func deliver(_ frame: [UInt8], on channel: Channel, of topic: inout Topic, now: ContinuousClock.Instant,
                 taggedFrame: () -> (frame: [UInt8], id: UInt64)) -> Delivery {
        var delivery = Delivery()
        var overflows: [(SubscriberCore, SubscriberQueue.Finish)] = []
        var tagged: (frame: [UInt8], id: UInt64)?
        for entry in topic.subscribers(channel).values {
            let action: SubscriberQueue.PushAction
            if entry.tagged {
                let shared = tagged ?? taggedFrame()
                tagged = shared
                action = entry.core.push(shared.frame, mark: FrameMark(slot: entry.slot, id: shared.id), now: now)
            } else {
                action = entry.core.push(frame, now: now)
            }
            switch action {
            case .queued(let wake):
                delivery.queued += 1
                wake?.resume()
            case .overflow(let finish):
                overflows.append((entry.core, finish))
            case .dropped:
                break  // Finished by its consumer; its key is in the inbox.
            }
        }
        for (core, finish) in overflows {
            overflowed(core, finish, in: &topic)
            if core.key.topics.count > 1 { delivery.overflowedTopics.append(core.key) }
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
        for name in key.topics {
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
