import Synchronization

/// Where subscriber ids come from: one source for every hub of a sharded engine,
/// so a several-topic subscriber registered in several shards has one key, and no
/// two subscribers of one topic's tables ever share an id. Ids start at 1 and are
/// never reused.
package final class SubscriberIDs: Sendable {
    package init() {}

    private let last = Atomic<UInt64>(0)

    package func next() -> UInt64 {
        last.add(1, ordering: .relaxed).newValue
    }
}
