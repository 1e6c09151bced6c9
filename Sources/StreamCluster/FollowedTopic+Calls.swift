import StreamHub

/// The engine's calls into a followed topic, one event each (`on(_:)` decides), and
/// how long an unwanted topic lingers before it is let go.
extension FollowedTopic {
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

    /// The sync failed (Redis answered nothing usable): try again. The topic is not
    /// catching up but failing, so its fences wait no longer for the engine's catch-up.
    mutating func syncFailed() -> Action {
        for index in fences.indices { fences[index].catchUpTimesLeft = 0 }
        return on(.syncFailed)
    }

    /// Records what the hub now holds after a sync's values were applied.
    mutating func synced(state: UInt64, events: UInt64) { _ = on(.synced(state: state, events: events)) }

    /// Takes the next pending message to apply after a sync: `.apply`, then `.live` when
    /// they are done, or `.sync` when one shows ids missing (or some were dropped).
    mutating func nextPending() -> Action { on(.takePending) }

    /// A message arrived on the topic's pub/sub channel.
    mutating func received(_ message: ClusterMessage) -> Action { on(.message(message)) }

    /// This gateway's publish of `message` was stored (the script's reply): `.apply`
    /// when it is next in id order (its echo is then skipped), else nothing yet.
    mutating func stored(_ message: ClusterMessage) -> Action { on(.stored(message)) }

    /// After an apply: the next of this gateway's publishes that waited for it, if any.
    mutating func takeAhead() -> ClusterMessage? {
        guard case .apply(let message) = on(.takeAhead) else { return nil }
        return message
    }

    /// A live topic syncs again from Redis (in other phases a sync comes anyway).
    mutating func resync() -> Action { on(.resync) }

    /// Redis's ids of the topic were raised: a live topic syncs again, and one whose sync
    /// is already sent syncs once more after it (`syncAgain`).
    mutating func idsRaised() -> Action { on(.raised) }

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
    var isIdle: Bool { isLive && arriving == 0 && fences.isEmpty }

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
}
