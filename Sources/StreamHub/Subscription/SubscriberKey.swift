/// Where a subscriber sits in the hub's tables: the slots it follows (one table
/// entry per topic) on one channel. `id` is unique for the hub's lifetime, so
/// removing by key twice, or after a topic was recreated, is harmless.
struct SubscriberKey: Sendable, Hashable {
    let slots: TopicSlots
    let channel: Channel
    let id: UInt64

    /// Every topic, in slot order.
    var topics: [String] { slots.names }
}
