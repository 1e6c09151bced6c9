/// Where a subscriber sits in the hub's tables. `id` is unique for the hub's lifetime,
/// so removing by key twice, or after a topic was recreated, is harmless.
struct SubscriberKey: Sendable, Hashable {
    /// The (first) topic. A several-topic stream's topics are `topic` then
    /// `moreTopics`, in parameter order; a topic's slot is its index there.
    let topic: String
    /// Empty for a single-topic subscriber (an empty array allocates nothing, so one
    /// topic costs what it did before several-topic streams).
    let moreTopics: [String]
    let channel: Channel
    let id: UInt64

    init(topic: String, channel: Channel, id: UInt64) {
        self.topic = topic
        self.moreTopics = []
        self.channel = channel
        self.id = id
    }

    init(topics: [String], channel: Channel, id: UInt64) {
        precondition(!topics.isEmpty, "a subscriber has at least one topic")
        self.topic = topics[0]
        self.moreTopics = Array(topics.dropFirst())
        self.channel = channel
        self.id = id
    }

    /// Every topic, in order.
    var topics: [String] { [topic] + moreTopics }
}
