import StreamHub

/// One topic a gateway follows in Redis: a pure state machine, driven by
/// `ClusterEngine` (which owns the one copy, in its actor, and changes it only through
/// these calls) and tested alone, turn by turn (`FollowedTopicTests`).
///
/// A gateway follows a topic while it has subscribers of it: it is subscribed to the
/// topic's pub/sub channel and its hub mirrors the topic (ids, state value, replay
/// window). Messages are applied straight to the hub only while `.live`; in every
/// other phase they wait in the phase's `PendingMessages` (bounded), because the hub's
/// copy is being (re)built and must receive the stored values first.
///
/// Every change is one `switch (phase, event)` in `on(_:)`; an event that cannot come
/// in a phase (the engine re-checks its link after every `await`, so none of them
/// can) stops the process rather than being passed over.
///
/// The topic also keeps its fences (`Fence`): subscribers waiting until the hub holds
/// what Redis held when they arrived. It says which fences are reached, overdue or
/// failed; the engine holds their continuations (`FenceWaits`) and resumes them.
struct FollowedTopic {
    /// Where the topic is; each phase carries what only it has. (Its events and
    /// actions, and its fences' types: `FollowedTopic+Types.swift`.)
    enum Phase: Equatable {
        /// The pub/sub `SUBSCRIBE` is to be sent (`sent` false) or awaits Redis's confirmation.
        case subscribing(sent: Bool, pending: PendingMessages)
        /// Subscribed; the sync script is to be run (`sent` false) or its reply is
        /// awaited or being applied, after which the pending messages apply.
        case syncing(sent: Bool, pending: PendingMessages)
        /// Messages apply as they come; an events message that skips an id means one
        /// was lost on the way, and the topic syncs again.
        case live
        /// Nobody subscribes here any more; the hub is asked to forget the topic.
        case leaving(pending: PendingMessages)
    }

    /// Messages held while not live; past it they are dropped and the topic syncs
    /// again from Redis's window.
    static let pendingLimit = 65_536
    /// The same bound in bytes of data (values may be up to the body limit each).
    static let pendingByteLimit = 8 << 20

    private(set) var phase: Phase = .subscribing(sent: false, pending: PendingMessages())
    /// Ids the hub holds for the topic (the engine is the hub's only writer for it).
    private(set) var lastState: UInt64 = 0
    private(set) var lastEvents: UInt64 = 0
    /// Subscribers between their arrival and their registration in the hub: while
    /// any, the topic is not let go.
    private(set) var arriving = 0
    /// Since when nobody here subscribes (nil while someone does).
    private(set) var unwantedSince: ContinuousClock.Instant?
    /// Subscribers waiting for their fence, in arrival order.
    private(set) var fences: [Fence] = []

    // MARK: The one transition function

    /// Moves the topic on after `event`; traps on an event its phase cannot have.
    mutating func on(_ event: Event) -> Action {
        switch (phase, event) {
        case (.subscribing(sent: false, let pending), .takeSubscribe):
            phase = .subscribing(sent: true, pending: pending)
            return .subscribe
        case (_, .takeSubscribe):
            return .none  // Sent already, or subscribed: nothing to send.

        case (.subscribing(sent: true, let pending), .subscribed):
            phase = .syncing(sent: false, pending: pending)
            return .sync

        case (.syncing(sent: false, let pending), .takeSync):
            phase = .syncing(sent: true, pending: pending)
            return .runSync(afterState: lastState, afterEvents: lastEvents)
        case (_, .takeSync):
            return .none  // Running already, or no sync due.

        case (.syncing(sent: true, let pending), .syncFailed):
            phase = .syncing(sent: false, pending: pending)
            return .sync

        case (.syncing(sent: true, _), .synced(let state, let events)):
            lastState = max(lastState, state)
            lastEvents = max(lastEvents, events)
            return .none

        case (.syncing(sent: true, var pending), .takePending):
            phase = .syncing(sent: true, pending: PendingMessages())  // `pending` the only copy: not copied when taken from.
            if pending.overflowed {
                phase = .syncing(sent: false, pending: PendingMessages())
                return .sync
            }
            while let message = pending.takeFirst() {
                switch decide(message) {
                case .apply:
                    phase = .syncing(sent: true, pending: pending)
                    return .apply(message)
                case .skip:
                    continue
                case .missing:
                    pending.putBack(message)
                    phase = .syncing(sent: false, pending: pending)
                    return .sync
                }
            }
            phase = .live
            return .live
        case (.subscribing, .takePending), (.syncing(sent: false, _), .takePending):
            return .none  // The link was lost, or a sync is due again: that one takes over.

        case (.live, .message(let message)):
            switch decide(message) {
            case .apply: return .apply(message)
            case .skip: return .none
            case .missing:
                var pending = PendingMessages()
                pending.hold(message)
                phase = .syncing(sent: false, pending: pending)
                return .sync
            }
        case (.subscribing(let sent, var pending), .message(let message)):
            phase = .subscribing(sent: sent, pending: PendingMessages())  // `pending` the only copy: not copied to add one.
            pending.hold(message)
            phase = .subscribing(sent: sent, pending: pending)
            return .none
        case (.syncing(let sent, var pending), .message(let message)):
            phase = .syncing(sent: sent, pending: PendingMessages())  // `pending` the only copy: not copied to add one.
            pending.hold(message)
            phase = .syncing(sent: sent, pending: pending)
            return .none
        case (.leaving(var pending), .message(let message)):
            phase = .leaving(pending: PendingMessages())  // `pending` the only copy: not copied to add one.
            pending.hold(message)
            phase = .leaving(pending: pending)
            return .none

        case (.live, .resync):
            phase = .syncing(sent: false, pending: PendingMessages())
            return .sync
        case (_, .resync):
            return .none  // A sync comes anyway.

        case (_, .linkLost):
            // The hub's copy stays; the next sync fetches only what came after it.
            phase = .subscribing(sent: false, pending: PendingMessages())
            return .none

        case (.live, .leave):
            precondition(isIdle, "leaving a topic that is not idle")
            phase = .leaving(pending: PendingMessages())
            return .none

        case (.leaving(let pending), .stayed):
            // Nothing to fetch: the pending messages apply as after a sync.
            phase = .syncing(sent: true, pending: pending)
            return .none

        case (.leaving, .forgotten):
            forgetIDs()
            phase = .syncing(sent: false, pending: PendingMessages())
            return .sync
        case (.subscribing(let sent, _), .forgotten):
            // The link was lost meanwhile: the next sync starts from nothing.
            forgetIDs()
            phase = .subscribing(sent: sent, pending: PendingMessages())
            return .none
        case (.syncing(sent: false, _), .forgotten):
            // The link was lost and is back meanwhile: the sync due starts from nothing.
            forgetIDs()
            phase = .syncing(sent: false, pending: PendingMessages())
            return .sync

        case (_, .subscribed), (_, .syncFailed), (_, .synced), (_, .takePending), (_, .leave), (_, .stayed), (_, .forgotten):
            preconditionFailure("followed topic: \(event) cannot come in \(phase)")
        }
    }

    private mutating func forgetIDs() {
        lastState = 0
        lastEvents = 0
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

    // MARK: The engine's calls (each one event)

    /// The worker takes the topic to send its SUBSCRIBE.
    mutating func takeSubscribe() -> Bool { on(.takeSubscribe) == .subscribe }

    /// Redis confirmed the SUBSCRIBE.
    mutating func subscribed() -> Action { on(.subscribed) }

    /// The worker takes the topic to run its sync script.
    mutating func takeSync() -> (afterState: UInt64, afterEvents: UInt64)? {
        guard case .runSync(let state, let events) = on(.takeSync) else { return nil }
        return (state, events)
    }

    /// The sync failed (Redis answered nothing usable): try again.
    mutating func syncFailed() -> Action { on(.syncFailed) }

    /// Records what the hub now holds after a sync's values were applied.
    mutating func synced(state: UInt64, events: UInt64) { _ = on(.synced(state: state, events: events)) }

    /// Takes the next pending message to apply after a sync: `.apply`, then `.live` when
    /// they are done, or `.sync` when one shows ids missing (or some were dropped).
    mutating func nextPending() -> Action { on(.takePending) }

    /// A message arrived on the topic's pub/sub channel.
    mutating func received(_ message: ClusterMessage) -> Action { on(.message(message)) }

    /// A live topic syncs again from Redis (in other phases a sync comes anyway).
    mutating func resync() -> Action { on(.resync) }

    /// The pub/sub connection was lost: everything starts over once it is back.
    /// Returns the fences to fail (their subscribers are refused).
    mutating func linkLost() -> [Fence.ID] {
        _ = on(.linkLost)
        defer { fences = [] }
        return fences.map(\.id)
    }

    /// Redis Cluster ended the topic's subscription (its slot moved to another master):
    /// subscribe again and sync, as after a lost link, but the fences keep waiting —
    /// the ids they wait for are in the topic's keys, which moved with the slot.
    mutating func slotMoved() { _ = on(.linkLost) }

    /// Whether the topic may be let go: nobody waiting or arriving, and live.
    var isIdle: Bool { phase == .live && arriving == 0 && fences.isEmpty }

    mutating func leave() { _ = on(.leave) }

    /// The hub kept the topic (a subscriber registered meanwhile): back to live,
    /// after the pending messages (`nextPending`).
    mutating func stayed() { _ = on(.stayed) }

    /// The hub forgot the topic but a subscriber arrived meanwhile: follow it anew
    /// from nothing (when still subscribed to the channel, by a sync).
    mutating func forgottenButWanted() -> Action { on(.forgotten) }

    // MARK: Subscribers arriving and lingering

    /// A subscriber arrived (until `subscriberRegistered`, the topic is not let go).
    mutating func subscriberArrived() {
        arriving += 1
        unwantedSince = nil
    }

    /// The subscriber is in the hub now, or gone.
    mutating func subscriberRegistered() {
        precondition(arriving > 0, "a subscriber registered that never arrived")
        arriving -= 1
    }

    /// Whether the topic may leave at `now`: idle, with nobody subscribed for `linger`
    /// (the first call without subscribers starts that time).
    mutating func mayLeave(subscribed: Bool, now: ContinuousClock.Instant, linger: Duration) -> Bool {
        guard !subscribed, isIdle else {
            unwantedSince = nil
            return false
        }
        let since = unwantedSince ?? now
        unwantedSince = since
        return now - since >= linger
    }

    // MARK: Fences

    /// Whether the hub holds at least the fence's ids now (only when live: during a
    /// sync the hub is being filled and a subscriber must not start in the middle).
    func reached(state: UInt64, events: UInt64) -> Bool {
        phase == .live && lastState >= state && lastEvents >= events
    }

    /// A subscriber waits for its fence (after `reached` said no).
    mutating func wait(_ fence: Fence) {
        fences.append(fence)
    }

    /// Takes the fences reached now.
    mutating func takeReachedFences() -> [Fence.ID] {
        guard phase == .live, !fences.isEmpty else { return [] }
        var reached: [Fence.ID] = []
        fences.removeAll { fence in
            guard lastState >= fence.state, lastEvents >= fence.events else { return false }
            reached.append(fence.id)
            return true
        }
        return reached
    }

    /// The fence's time passed.
    mutating func fenceOverdue(_ id: Fence.ID) -> Overdue {
        guard let index = fences.firstIndex(where: { $0.id == id }) else { return .settled }
        if fences[index].overdue {
            fences.remove(at: index)
            return .failed
        }
        fences[index].overdue = true
        return .extended(on(.resync))
    }

    /// The fence's subscriber left (or was answered): forgets it. True if it was waiting.
    mutating func removeFence(_ id: Fence.ID) -> Bool {
        guard let index = fences.firstIndex(where: { $0.id == id }) else { return false }
        fences.remove(at: index)
        return true
    }
}
