import StreamHub

/// One topic a gateway follows in Redis: a pure state machine, driven by
/// `ClusterEngine` (which owns the one copy, in its actor, and changes it only through
/// these calls) and tested alone, turn by turn (`FollowedTopicTests`).
///
/// A gateway follows a topic while it has subscribers of it: it is subscribed to the
/// topic's pub/sub channel and its hub mirrors the topic (ids, state value, replay
/// window). Messages are applied straight to the hub only while `.live`; in every
/// other phase they wait in the phase's `PendingMessages` (bounded), because the hub's
/// copy is being (re)built and must receive the stored values first. A value this
/// gateway published is applied from the script's reply (`stored`), without waiting
/// for its echo, when live and next in id order; ahead of ids still on their way by
/// pub/sub it waits in the live phase's `AheadMessages` until they came.
///
/// Every change is one `switch (phase, event)` in `on(_:)`; an event that cannot come
/// in a phase (the engine re-checks its link after every `await`, so none of them
/// can) stops the process rather than being passed over.
///
/// The topic also keeps its fences (`Fence`, `FollowedTopic+Fences.swift`): subscribers
/// waiting until the hub holds what Redis held when they arrived. It says which fences
/// are reached, overdue or failed; the engine holds their continuations (`FenceWaits`)
/// and resumes them. The engine's calls, one event each: `FollowedTopic+Calls.swift`.
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
        /// was lost on the way, and the topic syncs again. `ahead`: this gateway's own
        /// publishes whose earlier ids have not come by pub/sub yet.
        case live(ahead: AheadMessages)
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
    /// The highest ids this gateway's own publishes of the topic were acknowledged with
    /// (the script's replies), in every phase. A reply that comes while the topic is not
    /// live is not applied (its echo or the sync brings the value); but across a failover
    /// neither may: the value was stored on a master that is gone (without
    /// `--redis-min-replicas` API.md allows that loss), and the promoted one's counters
    /// are below it. While this gateway follows the topic, its next publish goes above
    /// these ids too (`idsAbove`), so it never hands out one of them again.
    private(set) var acknowledged: (state: UInt64, events: UInt64) = (0, 0)
    /// The acknowledged ids when the running sync was sent. Redis ran that sync after
    /// storing each of them, so any its reply lacks is lost: the sync raises Redis's
    /// counters past them, and the next sync skips them in the hub (a `gap`). Those
    /// acknowledged after the send may simply not be in the reply yet: a later sync
    /// looks at them.
    private(set) var acknowledgedAtSync: (state: UInt64, events: UInt64) = (0, 0)
    /// Redis's ids were raised (`idsRaised`) while a sync was already sent: Redis may have
    /// run that one before the raise, so the topic syncs once more before going live.
    /// Cleared when a sync is sent.
    private(set) var syncAgain = false
    // Set only by the calls of `FollowedTopic+Calls` and `+Fences` (the engine reads them).
    /// Subscribers between their arrival and their registration in the hub: while
    /// any, the topic is not let go.
    var arriving = 0
    /// Since when nobody here subscribes (nil while someone does).
    var unwantedSince: ContinuousClock.Instant?
    /// Subscribers waiting for their fence, in arrival order.
    var fences: [Fence] = []

    var isLive: Bool {
        if case .live = phase { true } else { false }
    }

    /// The ids a new id of the topic must be above (the publish script's `above`): the
    /// hub's and this gateway's acknowledged ones, the higher of each.
    var idsAbove: (state: UInt64, events: UInt64) {
        (max(lastState, acknowledged.state), max(lastEvents, acknowledged.events))
    }

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
            syncAgain = false
            acknowledgedAtSync = acknowledged
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
            if syncAgain {
                phase = .syncing(sent: false, pending: pending)
                return .sync
            }
            phase = .live(ahead: AheadMessages())
            return .live
        case (.subscribing, .takePending), (.syncing(sent: false, _), .takePending):
            return .none  // The link was lost, or a sync is due again: that one takes over.

        case (.live, .message(let message)):
            // Held ahead ones stay: after an apply the engine takes them (`takeAhead`).
            switch decide(message) {
            case .apply: return .apply(message)
            case .skip: return .none
            case .missing:
                var pending = PendingMessages()
                pending.hold(message)
                phase = .syncing(sent: false, pending: pending)
                return .sync
            }
        case (.live(var ahead), .stored(let message)):
            acknowledge(message)
            if message.channel == .state || message.id <= lastEvents + 1 {
                // Next (or a state value, which may skip ids), or held already (its echo came first).
                return decide(message) == .apply ? .apply(message) : .none
            }
            phase = .live(ahead: AheadMessages())  // `ahead` the only copy: not copied to add one.
            ahead.hold(message)
            phase = .live(ahead: ahead)
            return .none
        case (_, .stored(let message)):
            acknowledge(message)
            return .none  // Its echo, or the sync under way or due, brings it (or a `gap`, if it was lost).

        case (.live(var ahead), .takeAhead):
            phase = .live(ahead: AheadMessages())  // `ahead` the only copy: not copied when taken from.
            let next = ahead.next(after: lastEvents)
            phase = .live(ahead: ahead)
            guard let next else { return .none }
            lastEvents = next.id
            return .apply(next)
        case (_, .takeAhead):
            return .none  // Not live since: a sync brings them.

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

        case (.live, .resync), (.live, .raised):
            phase = .syncing(sent: false, pending: PendingMessages())
            return .sync
        case (.syncing(sent: true, _), .raised):
            syncAgain = true  // The sync sent may predate the raise.
            return .none
        case (_, .resync), (_, .raised):
            return .none  // A sync is sent later anyway.

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

    private mutating func acknowledge(_ message: ClusterMessage) {
        switch message.channel {
        case .state: acknowledged.state = max(acknowledged.state, message.id)
        case .events: acknowledged.events = max(acknowledged.events, message.id)
        }
    }

    private mutating func forgetIDs() {
        lastState = 0
        lastEvents = 0
        acknowledged = (0, 0)  // As long as the hub's copy: a Redis emptied on purpose starts over.
        acknowledgedAtSync = (0, 0)
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
}
