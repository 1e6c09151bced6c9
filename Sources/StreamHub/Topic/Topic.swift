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

    var allSubscribers: [SubscriberCore] {
        Array(stateSubscribers.values) + Array(eventsSubscribers.values)
    }

    mutating func insert(_ core: SubscriberCore) {
        switch core.key.channel {
        case .state: stateSubscribers[core.key.id] = core
        case .events: eventsSubscribers[core.key.id] = core
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

    var hasSubscribers: Bool { !stateSubscribers.isEmpty || !eventsSubscribers.isEmpty }

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
