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
    private(set) var stateSubscribers: [UInt64: SubscriberCore] = [:]
    private(set) var eventsSubscribers: [UInt64: SubscriberCore] = [:]
    /// Several-topic subscribers, with their slot for this topic. The same core sits
    /// in the table of each of its topics; these get the JSON frames.
    private(set) var stateTopicsSubscribers: [UInt64: SlotEntry] = [:]
    private(set) var eventsTopicsSubscribers: [UInt64: SlotEntry] = [:]

    /// A several-topic subscriber in one of its topics' tables.
    struct SlotEntry: Sendable {
        let core: SubscriberCore
        /// This topic's index in the subscriber's topics.
        let slot: Int
    }

    init(configuration: HubConfiguration) {
        self.window = ReplayWindow(capacity: configuration.replayCount, maxAge: configuration.replayMaxAge)
    }

    func lastID(_ channel: Channel) -> UInt64 {
        switch channel {
        case .state: stateLastID
        case .events: eventsLastID
        }
    }

    func subscribers(_ channel: Channel) -> [UInt64: SubscriberCore] {
        switch channel {
        case .state: stateSubscribers
        case .events: eventsSubscribers
        }
    }

    func topicsSubscribers(_ channel: Channel) -> [UInt64: SlotEntry] {
        switch channel {
        case .state: stateTopicsSubscribers
        case .events: eventsTopicsSubscribers
        }
    }

    /// Every core in the tables (a several-topic one once per topic it follows).
    var allSubscribers: [SubscriberCore] {
        Array(stateSubscribers.values) + Array(eventsSubscribers.values)
            + stateTopicsSubscribers.values.map(\.core) + eventsTopicsSubscribers.values.map(\.core)
    }

    /// Subscribers of the channel counted here: single-topic ones, and the several-topic
    /// ones whose first topic this is (so each is counted once across topics).
    func ownCount(_ channel: Channel) -> Int {
        subscribers(channel).count + topicsSubscribers(channel).values.reduce(0) { $0 + ($1.slot == 0 ? 1 : 0) }
    }

    /// Every subscriber of the channel that receives this topic's values.
    func reachCount(_ channel: Channel) -> Int {
        subscribers(channel).count + topicsSubscribers(channel).count
    }

    mutating func insert(_ core: SubscriberCore) {
        switch core.key.channel {
        case .state: stateSubscribers[core.key.id] = core
        case .events: eventsSubscribers[core.key.id] = core
        }
    }

    /// Registers a several-topic subscriber whose `slot` this topic is.
    mutating func insert(_ core: SubscriberCore, slot: Int) {
        switch core.key.channel {
        case .state: stateTopicsSubscribers[core.key.id] = SlotEntry(core: core, slot: slot)
        case .events: eventsTopicsSubscribers[core.key.id] = SlotEntry(core: core, slot: slot)
        }
    }

    mutating func remove(_ key: SubscriberKey) {
        switch key.channel {
        case .state:
            stateSubscribers[key.id] = nil
            stateTopicsSubscribers[key.id] = nil
        case .events:
            eventsSubscribers[key.id] = nil
            eventsTopicsSubscribers[key.id] = nil
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

    /// What a new events subscriber resuming after `lastEventID` receives first.
    ///
    /// - nil, or newer than the last id: nothing (treated as absent).
    /// - otherwise every held event with a greater id, preceded by `gap(N+1)` when an
    ///   event with id > N has left the window (for contiguous ids: N+1 is older than
    ///   the first held id, or the window is empty while N < last id). Comparing with
    ///   the newest evicted id, not `first - 1`, keeps ids skipped by the external-id
    ///   seam from being reported as lost.
    mutating func replay(after lastEventID: UInt64?, now: ContinuousClock.Instant) -> (frames: [[UInt8]], gap: Bool) {
        guard let resumeAfter = lastEventID, resumeAfter < eventsLastID else { return ([], false) }
        window.prune(now: now)
        var frames: [[UInt8]] = []
        let gap = resumeAfter < window.lastEvictedID
        if gap {
            frames.append(SSEEncoder.gap(firstMissingID: resumeAfter + 1))
        }
        frames += window.frames(after: resumeAfter)
        return (frames, gap)
    }

    /// What a new several-topic events subscriber resuming after `lastEventID` receives
    /// first, as JSON frames of topic `name` with their marks for `slot`: the same
    /// rules as `replay`, a gap as `TopicFrameEncoder.gap`.
    mutating func topicsReplay(after lastEventID: UInt64?, name: String, slot: Int,
                               now: ContinuousClock.Instant) -> (frames: [([UInt8], FrameMark)], gap: Bool) {
        guard let resumeAfter = lastEventID, resumeAfter < eventsLastID else { return ([], false) }
        window.prune(now: now)
        var frames: [([UInt8], FrameMark)] = []
        let gap = resumeAfter < window.lastEvictedID
        if gap {
            frames.append((TopicFrameEncoder.gap(topic: name, firstMissingID: resumeAfter + 1), FrameMark(slot: slot, id: 0)))
        }
        for (id, frame) in window.entries(after: resumeAfter) {
            let fields = TopicFrameEncoder.fields(of: frame)
            frames.append((TopicFrameEncoder.event(topic: name, id: id, event: fields.event, data: fields.data),
                           FrameMark(slot: slot, id: id)))
        }
        return (frames, gap)
    }

    /// The current state value as a JSON frame of topic `name`, marked for `slot`.
    func topicsStateFrame(name: String, slot: Int) -> ([UInt8], FrameMark)? {
        guard let stateFrame else { return nil }
        let fields = TopicFrameEncoder.fields(of: stateFrame)
        return (TopicFrameEncoder.event(topic: name, id: stateLastID, event: fields.event, data: fields.data),
                FrameMark(slot: slot, id: stateLastID))
    }

    /// Moves the events channel to `id` for events that are gone (a cluster's
    /// gateway found them evicted from the shared window before it had them): the
    /// window counts them as evicted, so a resume from before them gets a `gap`.
    mutating func skipEvents(through id: UInt64) {
        guard id > eventsLastID else { return }
        eventsLastID = id
        window.noteEvicted(through: id)
    }

    mutating func pruneWindow(now: ContinuousClock.Instant) {
        window.prune(now: now)
    }

    var hasSubscribers: Bool {
        !stateSubscribers.isEmpty || !eventsSubscribers.isEmpty
            || !stateTopicsSubscribers.isEmpty || !eventsTopicsSubscribers.isEmpty
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
