import StreamHub

/// One topic a gateway follows in Redis: a pure state machine, driven by
/// `ClusterEngine` (which owns the one copy, in its actor) and tested alone.
///
/// A gateway follows a topic while it has subscribers of it: it is subscribed to the
/// topic's pub/sub channel and its hub mirrors the topic (ids, state value, replay
/// window). Messages are applied straight to the hub only in `.live`; in every
/// other phase they wait in `buffer` (bounded), because the hub's copy is being
/// (re)built and must receive the stored values first.
///
/// Phases:
/// - `.subscribing`: the pub/sub `SUBSCRIBE` is to be sent (`subscribeSent` false) or awaits
///   Redis's confirmation.
/// - `.syncing`: subscribed; the sync script reads what Redis holds after `last*`
///   (`syncSent`), then the buffer is applied.
/// - `.live`: messages apply as they come; an events message that skips an id
///   means one was lost on the way, and the topic syncs again.
/// - `.leaving`: nobody subscribes here any more; the hub is asked to forget it.
struct FollowedTopic {
    enum Phase: Equatable { case subscribing, syncing, live, leaving }

    /// A subscriber waiting until this gateway holds at least what Redis held when
    /// it arrived (its fence), so it starts no older than any acknowledged publish.
    struct Waiter {
        let state: UInt64
        let events: UInt64
        var deadline: ContinuousClock.Instant
        /// Whether the deadline already passed once (and a sync was asked for).
        var extended = false
        let resume: CheckedContinuation<Bool, Never>
    }

    /// What the engine must do after an event.
    enum Action: Equatable {
        case none
        /// Send the pub/sub SUBSCRIBE (the engine's worker batches them).
        case subscribe
        /// Run the sync script.
        case sync
        /// Apply the message to the hub.
        case apply(ClusterMessage)
    }

    /// Messages held while not live; past it the buffer is dropped and the topic
    /// syncs again from Redis's window.
    static let bufferLimit = 65_536
    /// The same bound in bytes of data (values may be up to the body limit each).
    static let bufferByteLimit = 8 << 20

    private(set) var phase: Phase = .subscribing
    /// Ids the hub holds for the topic (the engine is the hub's only writer for it).
    private(set) var lastState: UInt64 = 0
    private(set) var lastEvents: UInt64 = 0
    private(set) var subscribeSent = false
    private(set) var syncSent = false
    private(set) var buffer: [ClusterMessage] = [] {
        didSet { if buffer.isEmpty { bufferBytes = 0 } }
    }
    private var bufferBytes = 0
    /// The buffer overflowed: what it dropped is fetched by another sync.
    private(set) var bufferDropped = false
    /// Subscribers between their arrival and their registration in the hub: while
    /// any, the topic is not let go.
    var pendingSubscribers = 0
    /// Since when nobody here subscribes (nil while someone does): the sweep lets
    /// the topic go once that is older than the linger.
    var unwantedSince: ContinuousClock.Instant?
    var waiters: [Waiter] = []

    // MARK: Subscribing and syncing

    /// The worker takes the topic to send its SUBSCRIBE.
    mutating func takeSubscribe() -> Bool {
        guard phase == .subscribing, !subscribeSent else { return false }
        subscribeSent = true
        return true
    }

    /// Redis confirmed the SUBSCRIBE.
    mutating func subscribed() -> Action {
        guard phase == .subscribing, subscribeSent else { return .none }
        phase = .syncing
        syncSent = false
        return .sync
    }

    /// The worker takes the topic to run its sync script.
    mutating func takeSync() -> (afterState: UInt64, afterEvents: UInt64)? {
        guard phase == .syncing, !syncSent else { return nil }
        syncSent = true
        return (lastState, lastEvents)
    }

    /// The sync failed (Redis answered nothing usable): try again.
    mutating func syncFailed() -> Action {
        guard phase == .syncing, syncSent else { return .none }
        syncSent = false
        return .sync
    }

    /// Records what the hub now holds after a sync's values were applied.
    mutating func synced(state: UInt64, events: UInt64) {
        lastState = max(lastState, state)
        lastEvents = max(lastEvents, events)
    }

    /// Takes the next buffered message to apply after a sync, or nil when the buffer
    /// is done (the topic is then live) or a message shows ids missing (another
    /// sync is due: `needsSync`).
    mutating func nextBuffered() -> (message: ClusterMessage?, needsSync: Bool) {
        guard phase == .syncing else { return (nil, false) }
        if bufferDropped {
            bufferDropped = false
            buffer = []
            syncSent = false
            return (nil, true)
        }
        while !buffer.isEmpty {
            let message = buffer.removeFirst()
            switch decide(message) {
            case .apply: return (message, false)
            case .skip: continue
            case .missing:
                buffer.insert(message, at: 0)
                syncSent = false
                return (nil, true)
            }
        }
        phase = .live
        return (nil, false)
    }

    // MARK: Messages

    /// A message arrived on the topic's pub/sub channel.
    mutating func received(_ message: ClusterMessage) -> Action {
        switch phase {
        case .live:
            switch decide(message) {
            case .apply: return .apply(message)
            case .skip: return .none
            case .missing:
                phase = .syncing
                syncSent = false
                buffer = [message]
                return .sync
            }
        case .subscribing, .syncing, .leaving:
            if buffer.count >= Self.bufferLimit || bufferBytes + message.data.utf8.count > Self.bufferByteLimit {
                bufferDropped = true
                buffer = []
            }
            if !bufferDropped {
                buffer.append(message)
                bufferBytes += message.data.utf8.count
            }
            return .none
        }
    }

    private enum Decision { case apply, skip, missing }

    /// Whether a message is next, already held, or shows ids missing before it; an
    /// `apply` moves the held ids on.
    private mutating func decide(_ message: ClusterMessage) -> Decision {
        switch message.channel {
        case .state:
            // Superseded state values may be skipped: only a newer one matters.
            guard message.id > lastState else { return .skip }
            lastState = message.id
            return .apply
        case .events:
            if message.id <= lastEvents { return .skip }
            if message.id != lastEvents + 1 { return .missing }
            lastEvents = message.id
            return .apply
        }
    }

    /// A subscriber's fence was not reached in time: a message may have been lost on
    /// the way, so a live topic syncs again from Redis.
    mutating func resync() {
        guard phase == .live else { return }
        phase = .syncing
        syncSent = false
    }

    // MARK: The link and leaving

    /// The pub/sub connection was lost: everything starts over once it is back
    /// (the hub's copy stays; the next sync fetches only what came after it).
    /// Returns the waiters to fail.
    mutating func linkLost() -> [Waiter] {
        phase = .subscribing
        subscribeSent = false
        syncSent = false
        buffer = []
        bufferDropped = false
        defer { waiters = [] }
        return waiters
    }

    /// Whether the topic may be let go: nobody waiting or arriving, and live.
    var isIdle: Bool { phase == .live && pendingSubscribers == 0 && waiters.isEmpty }

    mutating func leave() {
        precondition(isIdle, "leaving a topic that is not idle")
        phase = .leaving
    }

    /// The hub kept the topic (a subscriber registered meanwhile): back to live,
    /// after the buffer. Returns the action for the buffered messages.
    mutating func stayed() -> Action {
        guard phase == .leaving else { return .none }
        phase = .syncing
        syncSent = true  // Nothing to fetch: apply the buffer as after a sync.
        return .none
    }

    /// The hub forgot the topic but a subscriber arrived meanwhile: follow it anew
    /// from nothing (when still subscribed to the channel, by a sync).
    mutating func forgottenButWanted() -> Action {
        let wasLeaving = phase == .leaving
        if wasLeaving {
            phase = .syncing
            syncSent = false
        }
        lastState = 0
        lastEvents = 0
        buffer = []
        bufferDropped = false
        return wasLeaving ? .sync : .none
    }

    // MARK: Waiters

    /// Whether the hub holds at least the given ids.
    func holds(state: UInt64, events: UInt64) -> Bool {
        lastState >= state && lastEvents >= events
    }

    /// Takes the waiters whose fence is reached (only when live: during a sync the
    /// hub is being filled and a subscriber must not start in the middle).
    mutating func takeSatisfiedWaiters() -> [Waiter] {
        guard phase == .live, !waiters.isEmpty else { return [] }
        let (state, events) = (lastState, lastEvents)
        var satisfied: [Waiter] = []
        waiters.removeAll { waiter in
            guard state >= waiter.state, events >= waiter.events else { return false }
            satisfied.append(waiter)
            return true
        }
        return satisfied
    }
}
