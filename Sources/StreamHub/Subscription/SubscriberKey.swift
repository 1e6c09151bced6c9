/// Where a subscriber sits in the hub's tables. `id` is unique for the hub's lifetime,
/// so removing by key twice, or after a topic was recreated, is harmless.
struct SubscriberKey: Sendable, Hashable {
    /// The subscriber's topics: one, or a several-topic stream's in parameter order
    /// (its slot in each topic's table is the index here).
    let topics: [String]
    let channel: Channel
    let id: UInt64

    init(topic: String, channel: Channel, id: UInt64) {
        self.init(topics: [topic], channel: channel, id: id)
    }

    init(topics: [String], channel: Channel, id: UInt64) {
        precondition(!topics.isEmpty, "a subscriber has at least one topic")
        self.topics = topics
        self.channel = channel
        self.id = id
    }

    /// The first (for a single-topic subscriber, the only) topic.
    var topic: String { topics[0] }
}
