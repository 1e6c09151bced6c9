/// Where a subscriber sits in the hub's tables. `id` is unique for the hub's lifetime,
/// so removing by key twice, or after the topic was recreated, is harmless.
struct SubscriberKey: Sendable, Hashable {
    let topic: String
    let channel: Channel
    let id: UInt64
}
