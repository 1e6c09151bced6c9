/// One topic's state, a value in the `Hub` actor's table, mutated in place there
/// (`Hub.withTopic`) so its tables and window are never copied.
///
/// Bounds: one state frame, `replayCount` events, the subscriber tables.
struct Topic: Sendable {
    /// Last id given on each channel (0: none yet). Ids only grow while the topic lives.
    private(set) var stateLastID: UInt64 = 0
    private(set) var eventsLastID: UInt64 = 0
    /// The current state value's frame.
    private(set) var stateFrame: [UInt8]?
    /// Recent events for `Last-Event-ID`.
    private(set) var window: ReplayWindow
    /// Every subscriber of each channel that follows this topic, with the slot the
    /// topic is in its stream (0 for a one-topic stream). A several-topic subscriber
    /// sits in the table of each of its topics.
    private(set) var stateSubscribers: [UInt64: SlotEntry] = [:]
    private(set) var eventsSubscribers: [UInt64: SlotEntry] = [:]

    /// A subscriber in this topic's table.
    struct SlotEntry: Sendable {
        let core: SubscriberCore
        /// This topic's index in the subscriber's slots.
        let slot: Int
        /// Whether it takes tagged frames (else the topic's own frame, as it is).
        let tagged: Bool
    }

    init(configuration: HubConfiguration) {
        self.window = ReplayWindow(capacity: configuration.replayCount, maxAge: configuration.replayMaxAge)
    }

    func subscribers(_ channel: Channel) -> [UInt64: SlotEntry] {
        switch channel {
        case .state: stateSubscribers
        case .events: eventsSubscribers
        }
    }

    /// Every core in the tables (a several-topic one once per topic it follows).
    var allSubscribers: [SubscriberCore] {
        stateSubscribers.values.map(\.core) + eventsSubscribers.values.map(\.core)
    }

    /// Subscribers of the channel counted here: those whose first slot this topic is
    /// (so a several-topic one is counted once across its topics).
    func ownCount(_ channel: Channel) -> Int {
        subscribers(channel).values.reduce(0) { $0 + ($1.slot == 0 ? 1 : 0) }
    }

    /// Every subscriber of the channel that receives this topic's values.
    func reachCount(_ channel: Channel) -> Int {
        subscribers(channel).count
    }

    /// Registers a subscriber whose `slot` this topic is.
    mutating func insert(_ core: SubscriberCore, slot: Int) {
        let entry = SlotEntry(core: core, slot: slot, tagged: core.key.slots.isMarked)
        switch core.key.channel {
        case .state: stateSubscribers[core.key.id] = entry
        case .events: eventsSubscribers[core.key.id] = entry
        }
    }

    mutating func remove(_ key: SubscriberKey) {
        switch key.channel {
        case .state: stateSubscribers[key.id] = nil
        case .events: eventsSubscribers[key.id] = nil
        }
    }

    /// Records a published frame as the channel's newest.
    mutating func record(id: UInt64, frame: [UInt8], channel: Channel, now: ContinuousClock.Instant) {
        switch channel {
        case .state:
            stateLastID = id
            stateFrame = frame
        case .events:
            eventsLastID = id
            window.append(id: id, at: now, frame: frame)
        }
    }

    /// What a new events subscriber resuming after `lastEventID` receives first in
    /// `slot` of `slots`, each frame as that stream writes it:
    ///
    /// - nil, or newer than the last id: nothing (treated as absent).
    /// - otherwise what the window gives a resume after N (`ReplayWindow.entries`): every
    ///   held event with a greater id, preceded by `gap(N+1)` when an event with id > N
    ///   has left the window, and a `gap` where it would cross ids a cluster skipped
    ///   after a held event (they hold no value: a failover lost them).
    mutating func replay(after lastEventID: UInt64?, slot: Int, of slots: TopicSlots,
                         now: ContinuousClock.Instant) -> (frames: [([UInt8], FrameMark?)], gaps: Int) {
        guard let resumeAfter = lastEventID, resumeAfter < eventsLastID else { return ([], 0) }
        window.prune(now: now)
        var frames: [([UInt8], FrameMark?)] = []
        var gaps = 0
        for replayed in window.entries(after: resumeAfter) {
            switch replayed {
            case .event(let id, let frame):
                frames.append(slots.valueFrame(frame, id: id, slot: slot))
            case .gap(let first):
                frames.append(slots.gapFrame(slot: slot, firstMissingID: first))
                gaps += 1
            }
        }
        return (frames, gaps)
    }

    /// The current state value as `slot` of `slots` writes it, if there is one.
    func stateSnapshot(slot: Int, of slots: TopicSlots) -> ([UInt8], FrameMark?)? {
        stateFrame.map { slots.valueFrame($0, id: stateLastID, slot: slot) }
    }

    /// Moves the events channel to `id` for events that are gone (a cluster's
    /// gateway found them gone from the shared window before it had them): the
    /// window records them as holding no value, so a resume from before them gets a `gap`.
    mutating func skipEvents(through id: UInt64) {
        guard id > eventsLastID else { return }
        window.noteSkipped(after: eventsLastID, through: id)
        eventsLastID = id
    }

    mutating func pruneWindow(now: ContinuousClock.Instant) {
        window.prune(now: now)
    }

    var hasSubscribers: Bool {
        !stateSubscribers.isEmpty || !eventsSubscribers.isEmpty
    }

    /// Whether anything here is worth keeping: subscribers, a state value, or events
    /// still in the window after pruning by age. Forgetting a topic resets its ids.
    ///
    /// The window is pruned first whatever the answer: a topic kept for its state
    /// value or its subscribers must still let its expired events go, and the
    /// hub's once-a-second sweep (which asks this) is what frees them on a topic
    /// nobody publishes to any more.
    mutating func isWorthKeeping(now: ContinuousClock.Instant) -> Bool {
        window.prune(now: now)
        return hasSubscribers || stateFrame != nil || !window.isEmpty
    }
}
