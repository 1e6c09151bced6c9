import Synchronization

/// Lock-free counters of one hub, readable from any thread without an actor hop
/// (the metrics endpoint reads them). Monotonic except the `subscribers` gauge.
public final class HubCounters: Sendable {
    /// Counters kept once per channel.
    private struct PerChannel: ~Copyable, Sendable {
        /// Successful publishes.
        let publishes = Atomic<UInt64>(0)
        /// Event frames queued to subscribers (replay and gap frames included,
        /// heartbeats not).
        let framesQueued = Atomic<UInt64>(0)
        /// Event frames handed to consumers by `nextBatch` (heartbeats not counted).
        let framesDelivered = Atomic<UInt64>(0)
        /// Live subscriptions; decremented the moment one finishes.
        let subscribers = Atomic<Int>(0)
    }

    private let state = PerChannel()
    private let events = PerChannel()
    private let slowDisconnects = Atomic<UInt64>(0)
    private let gaps = Atomic<UInt64>(0)
    private let forgottenLetGo = Atomic<UInt64>(0)

    public init() {}

    /// Successful publishes on `channel`.
    public func publishes(_ channel: Channel) -> UInt64 {
        counters(of: channel) { $0.publishes.load(ordering: .relaxed) }
    }

    /// Event frames queued to subscribers of `channel` (replay and gap frames included).
    public func framesQueued(_ channel: Channel) -> UInt64 {
        counters(of: channel) { $0.framesQueued.load(ordering: .relaxed) }
    }

    /// Event frames handed out by `nextBatch` on `channel` (heartbeats excluded).
    public func framesDelivered(_ channel: Channel) -> UInt64 {
        counters(of: channel) { $0.framesDelivered.load(ordering: .relaxed) }
    }

    /// Events subscribers finished with `.overflow`.
    public var slowSubscriberDisconnects: UInt64 {
        slowDisconnects.load(ordering: .relaxed)
    }

    /// `gap` events queued to subscribers (on resuming, or live after a cluster's
    /// gateway found events gone that its subscribers had not had).
    public var gapEvents: UInt64 {
        gaps.load(ordering: .relaxed)
    }

    /// Forgotten topics whose last events id the hubs' record let go (`ForgottenTopics`,
    /// full): used again, such a topic starts at id 1.
    public var forgottenTopicsLetGo: UInt64 {
        forgottenLetGo.load(ordering: .relaxed)
    }

    /// Live subscribers of `channel`; exact as soon as `cancel()` (or any finish) returns.
    public func subscribers(_ channel: Channel) -> Int {
        counters(of: channel) { $0.subscribers.load(ordering: .relaxed) }
    }

    // MARK: - Updates (the hub, its subscriptions, and an engine in front of a hub)

    /// Counts one accepted publish (public for an engine that stores values elsewhere
    /// and feeds its hub through `Hub.apply`, which does not count).
    public func published(_ channel: Channel) {
        counters(of: channel) { $0.publishes.add(1, ordering: .relaxed) }
    }

    func queued(_ channel: Channel, frames: Int) {
        guard frames > 0 else { return }
        counters(of: channel) { $0.framesQueued.add(UInt64(frames), ordering: .relaxed) }
    }

    func delivered(_ channel: Channel, frames: Int) {
        guard frames > 0 else { return }
        counters(of: channel) { $0.framesDelivered.add(UInt64(frames), ordering: .relaxed) }
    }

    func subscriberJoined(_ channel: Channel) {
        counters(of: channel) { $0.subscribers.add(1, ordering: .relaxed) }
    }

    func subscriberLeft(_ channel: Channel) {
        counters(of: channel) { $0.subscribers.subtract(1, ordering: .relaxed) }
    }

    func forgottenTopicsLetGo(_ count: Int) {
        guard count > 0 else { return }
        forgottenLetGo.add(UInt64(count), ordering: .relaxed)
    }

    func gapQueued(_ count: Int = 1) {
        gaps.add(UInt64(count), ordering: .relaxed)
    }

    func slowSubscriberDisconnected() {
        slowDisconnects.add(1, ordering: .relaxed)
    }

    @discardableResult
    private func counters<R>(of channel: Channel, _ body: (borrowing PerChannel) -> R) -> R {
        switch channel {
        case .state: body(state)
        case .events: body(events)
        }
    }
}
