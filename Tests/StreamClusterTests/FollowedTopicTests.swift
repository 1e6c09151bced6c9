@testable import StreamCluster
import StreamHub
import Testing

/// The follow state machine alone, turn by turn without Redis: which messages reach
/// the hub, when a topic syncs, and which fences are reached, overdue or failed.
struct FollowedTopicTests {
    private func message(_ channel: Channel, _ id: UInt64) -> ClusterMessage {
        ClusterMessage(channel: channel, id: id, event: nil, data: "v\(id)")
    }

    /// A topic that is live after subscribing, a sync and its pending messages.
    private func liveTopic(state: UInt64 = 0, events: UInt64 = 0) -> FollowedTopic {
        var topic = FollowedTopic()
        #expect(topic.takeSubscribe() == true)
        #expect(topic.subscribed() == .sync)
        _ = topic.takeSync()
        topic.synced(state: state, events: events)
        #expect(topic.nextPending() == .live)
        #expect(topic.isLive && topic.phase == .live(ahead: AheadMessages()))
        return topic
    }

    /// Messages that arrive before the sync is applied wait, then apply in order past what the sync brought.
    @Test func messagesDuringASyncWaitAndApplyAfterIt() {
        var topic = FollowedTopic()
        #expect(topic.takeSubscribe() == true)
        #expect(topic.takeSubscribe() == false)
        #expect(topic.received(message(.events, 5)) == .none)
        #expect(topic.subscribed() == .sync)
        #expect(topic.received(message(.events, 6)) == .none)
        #expect(topic.takeSync()! == (0, 0))
        #expect(topic.takeSync() == nil)
        topic.synced(state: 0, events: 5)  // The sync brought ids up to 5.
        #expect(topic.nextPending() == .apply(message(.events, 6)))  // 5 is held already.
        #expect(topic.nextPending() == .live)
        #expect(topic.isLive && topic.phase == .live(ahead: AheadMessages()))
        #expect(topic.lastEvents == 6)
    }

    /// A live topic applies the next events id, skips held ones, and syncs again when an id is missing.
    @Test func aMissingEventsIDTriggersASync() {
        var topic = liveTopic(events: 3)
        #expect(topic.received(message(.events, 4)) == .apply(message(.events, 4)))
        #expect(topic.received(message(.events, 4)) == .none)
        #expect(topic.received(message(.events, 6)) == .sync)
        guard case .syncing(sent: false, let pending) = topic.phase else {
            Issue.record("not syncing: \(topic.phase)")
            return
        }
        #expect(pending.count == 1)
        #expect(topic.takeSync()! == (0, 4))
        topic.synced(state: 0, events: 6)
        #expect(topic.nextPending() == .live)  // 6 came with the sync.
        #expect(topic.isLive && topic.phase == .live(ahead: AheadMessages()))
    }

    /// This gateway's own publish applies from the script's reply when next; its echo is then skipped.
    @Test func anOwnPublishAppliesFromItsReplyAndItsEchoIsSkipped() {
        var topic = liveTopic(state: 1, events: 3)
        #expect(topic.stored(message(.events, 4)) == .apply(message(.events, 4)))
        #expect(topic.received(message(.events, 4)) == .none)
        #expect(topic.stored(message(.state, 5)) == .apply(message(.state, 5)))
        #expect(topic.received(message(.state, 5)) == .none)
        #expect(topic.lastEvents == 4 && topic.lastState == 5)
    }

    /// An own publish ahead of ids still on their way by pub/sub waits for them, then applies before its echo.
    @Test func anOwnPublishAheadWaitsForTheIDsBeforeIt() {
        var topic = liveTopic(events: 3)
        #expect(topic.stored(message(.events, 6)) == .none)
        #expect(topic.stored(message(.events, 5)) == .none)
        #expect(topic.takeAhead() == nil)  // 4 has not come.
        #expect(topic.received(message(.events, 4)) == .apply(message(.events, 4)))
        #expect(topic.takeAhead() == message(.events, 5))
        #expect(topic.takeAhead() == message(.events, 6))
        #expect(topic.takeAhead() == nil)
        #expect(topic.received(message(.events, 5)) == .none && topic.received(message(.events, 6)) == .none)
        #expect(topic.lastEvents == 6)
    }

    /// Held own publishes are dropped when the topic syncs (the sync or their echo brings them), and are
    /// never applied outside the live phase.
    @Test func ownPublishesOutsideLiveWaitForTheirEchoOrTheSync() {
        var topic = liveTopic(events: 3)
        #expect(topic.stored(message(.events, 5)) == .none)
        #expect(topic.received(message(.events, 6)) == .sync)  // 4 and 5 missing by pub/sub: a sync.
        #expect(topic.stored(message(.events, 7)) == .none)
        _ = topic.takeSync()
        topic.synced(state: 0, events: 7)
        #expect(topic.nextPending() == .live)
        #expect(topic.takeAhead() == nil)
        #expect(topic.isLive && topic.phase == .live(ahead: AheadMessages()))
    }

    /// Own publishes acknowledged while the topic is not live (replies in flight when the link was
    /// lost to a failover, stored on a master that is gone) are not applied, but the next publish goes
    /// above them (`idsAbove`), and the next sync sent knows them (`acknowledgedAtSync`: what its reply
    /// lacks is lost; the engine raises Redis's counters past it, and the sync after skips it, a `gap`).
    /// Forgetting the topic forgets them with the hub's copy.
    @Test func ownPublishesAcknowledgedOutsideLiveAreNotHandedOutAgain() {
        var topic = liveTopic(state: 2, events: 3)
        #expect(topic.stored(message(.events, 4)) == .apply(message(.events, 4)))
        #expect(topic.idsAbove == (2, 4))
        _ = topic.linkLost()
        #expect(topic.stored(message(.events, 5)) == .none)
        #expect(topic.stored(message(.state, 6)) == .none)
        #expect(topic.stored(message(.events, 3)) == .none)  // An older reply lowers nothing.
        #expect(topic.lastState == 2 && topic.lastEvents == 4)  // The hub has neither.
        #expect(topic.idsAbove == (6, 5))
        #expect(topic.takeSubscribe() == true)
        #expect(topic.subscribed() == .sync)
        #expect(topic.acknowledgedAtSync == (0, 0))
        #expect(topic.takeSync()! == (2, 4))
        #expect(topic.acknowledgedAtSync == (6, 5))
        #expect(topic.stored(message(.events, 7)) == .none)  // After the send: for the next sync.
        #expect(topic.acknowledgedAtSync == (6, 5) && topic.idsAbove == (6, 7))
        topic.synced(state: 2, events: 5)  // The promoted replica never had 5: raised to it, then skipped.
        #expect(topic.nextPending() == .live)
        #expect(topic.received(message(.events, 8)) == .sync)  // 6 and 7 not come: a sync.
        _ = topic.takeSync()
        #expect(topic.acknowledgedAtSync == (6, 7))
        topic.synced(state: 2, events: 8)
        #expect(topic.nextPending() == .live)
        topic.leave()
        #expect(topic.forgottenButWanted() == .sync)
        #expect(topic.idsAbove == (0, 0) && topic.acknowledgedAtSync == (0, 0))
    }

    /// State values may skip ids (only the newest matters) but never go back.
    @Test func stateAppliesOnlyNewerValues() {
        var topic = liveTopic(state: 2)
        #expect(topic.received(message(.state, 5)) == .apply(message(.state, 5)))
        #expect(topic.received(message(.state, 4)) == .none)
        #expect(topic.lastState == 5)
    }

    /// A pending message past a hole asks for another sync instead of applying across it.
    @Test func aHoleInThePendingMessagesSyncsAgain() {
        var topic = FollowedTopic()
        _ = topic.takeSubscribe()
        _ = topic.subscribed()
        _ = topic.takeSync()
        _ = topic.received(message(.events, 9))
        topic.synced(state: 0, events: 7)
        #expect(topic.nextPending() == .sync)
        #expect(topic.takeSync()! == (0, 7))
        topic.synced(state: 0, events: 8)
        #expect(topic.nextPending() == .apply(message(.events, 9)))
        #expect(topic.nextPending() == .live)
    }

    /// Past the bound, what waits is dropped and fetched by another sync.
    @Test func overflowingPendingMessagesAreFetchedAgain() {
        var topic = FollowedTopic()
        _ = topic.takeSubscribe()
        for id in 1...UInt64(FollowedTopic.pendingLimit + 1) {
            _ = topic.received(message(.events, id))
        }
        _ = topic.subscribed()
        _ = topic.takeSync()
        topic.synced(state: 0, events: 0)
        #expect(topic.nextPending() == .sync)
        #expect(topic.phase == .syncing(sent: false, pending: PendingMessages()))
    }

    /// Losing the link sends a topic back to subscribing and hands back its fences to fail.
    @Test func losingTheLinkStartsOverAndFailsTheFences() {
        var topic = liveTopic(events: 3)
        _ = topic.received(message(.events, 4))
        #expect(!topic.reached(state: 0, events: 9))
        topic.wait(.init(id: 7, state: 0, events: 9))
        #expect(topic.linkLost() == [7])
        #expect(topic.fences.isEmpty)
        #expect(topic.phase == .subscribing(sent: false, pending: PendingMessages()))
        #expect(topic.takeSubscribe() == true)
        #expect(topic.lastEvents == 4)  // The hub's copy stays; the next sync starts after it.
    }

    /// A fence is reached by the message that brings the mirror there, and only while live.
    @Test func aFenceIsReachedByTheMessageThatBringsTheMirrorThere() {
        var topic = liveTopic(state: 1, events: 3)
        #expect(topic.reached(state: 1, events: 3))
        topic.wait(.init(id: 1, state: 0, events: 4))
        topic.wait(.init(id: 2, state: 2, events: 3))
        #expect(topic.takeReachedFences().isEmpty)
        _ = topic.received(message(.events, 4))
        #expect(topic.takeReachedFences() == [1])
        _ = topic.received(message(.events, 6))  // 5 is missing: a sync, no fence reached meanwhile.
        _ = topic.received(message(.state, 2))
        #expect(topic.takeReachedFences().isEmpty)
        _ = topic.takeSync()
        topic.synced(state: 2, events: 6)
        #expect(topic.nextPending() == .live)
        #expect(topic.takeReachedFences() == [2])
    }

    /// An overdue fence syncs a live topic again once; the second time it fails; a settled one is left alone.
    @Test func anOverdueFenceSyncsOnceThenFails() {
        var topic = liveTopic(events: 3)
        topic.wait(.init(id: 5, state: 0, events: 4))
        #expect(topic.fenceOverdue(5, progress: 0) == .extended(.sync))
        #expect(topic.phase == .syncing(sent: false, pending: PendingMessages()))
        #expect(topic.fenceOverdue(5, progress: 0) == .failed)
        #expect(topic.fences.isEmpty)
        #expect(topic.fenceOverdue(5, progress: 0) == .settled)
    }

    /// A fence of a topic still catching up waits on while the engine's catch-up moves
    /// (at most its `catchUpTimesLeft`); a time in which it did not move makes the fence
    /// overdue, a move after that waits on again, and a second stalled time in a row
    /// refuses it. A live topic's fence is overdue whatever moved.
    @Test func aFenceWaitsWhileItsTopicCatchesUp() {
        var topic = FollowedTopic()
        topic.wait(.init(id: 1, state: 0, events: 4, progress: 10, catchUpTimesLeft: 9))
        #expect(topic.fenceOverdue(1, progress: 11) == .extended(.none))
        #expect(topic.fenceOverdue(1, progress: 12) == .extended(.none))
        #expect(topic.fenceOverdue(1, progress: 12) == .extended(.none))  // Overdue: a sync comes anyway.
        #expect(topic.fenceOverdue(1, progress: 13) == .extended(.none))  // Moved on: waits on.
        #expect(topic.fenceOverdue(1, progress: 13) == .extended(.none))  // Overdue again.
        #expect(topic.fenceOverdue(1, progress: 13) == .failed)  // Two stalled times in a row.
        #expect(topic.fences.isEmpty)

        // Stalled and moving times alternating: each uses one of the catch-up's times, so
        // the wait ends with them (the longest wait stays the limit and two fence times).
        topic.wait(.init(id: 6, state: 0, events: 4, progress: 0, catchUpTimesLeft: 4))
        #expect(topic.fenceOverdue(6, progress: 0) == .extended(.none))  // Stalled: overdue (3 left).
        #expect(topic.fenceOverdue(6, progress: 1) == .extended(.none))  // Moved (2 left).
        #expect(topic.fenceOverdue(6, progress: 1) == .extended(.none))  // Stalled (1 left).
        #expect(topic.fenceOverdue(6, progress: 2) == .extended(.none))  // Moved (none left).
        #expect(topic.fenceOverdue(6, progress: 3) == .extended(.none))  // Moved, but no time left: overdue.
        #expect(topic.fenceOverdue(6, progress: 4) == .failed)

        topic.wait(.init(id: 2, state: 0, events: 4, catchUpTimesLeft: 3))
        for progress in 1...3 as ClosedRange<UInt64> {
            #expect(topic.fenceOverdue(2, progress: progress) == .extended(.none))
        }
        #expect(topic.fenceOverdue(2, progress: 4) == .extended(.none))  // Its times used up: overdue.
        #expect(topic.fenceOverdue(2, progress: 5) == .failed)

        // A topic whose own sync failed is not catching up: its fences wait no longer.
        var failing = FollowedTopic()
        _ = failing.takeSubscribe()
        _ = failing.subscribed()
        _ = failing.takeSync()
        failing.wait(.init(id: 4, state: 0, events: 4, catchUpTimesLeft: 5))
        #expect(failing.fenceOverdue(4, progress: 1) == .extended(.none))
        _ = failing.syncFailed()
        #expect(failing.fenceOverdue(4, progress: 2) == .extended(.none))  // Overdue: the sync is due again.
        #expect(failing.fenceOverdue(4, progress: 3) == .failed)

        var live = liveTopic(events: 3)
        live.wait(.init(id: 3, state: 0, events: 4, catchUpTimesLeft: 5))
        #expect(live.fenceOverdue(3, progress: 1) == .extended(.sync))
        #expect(!live.isLive)  // Syncing again: but that is no catch-up to wait on.
        #expect(live.fenceOverdue(3, progress: 2) == .failed)
    }

    /// A fence whose subscriber left is forgotten; the topic may then be let go.
    @Test func aFenceWhoseSubscriberLeftIsForgotten() {
        var topic = liveTopic(events: 3)
        topic.wait(.init(id: 1, state: 0, events: 9))
        #expect(!topic.isIdle)
        #expect(topic.removeFence(1) == true)
        #expect(topic.removeFence(1) == false)
        #expect(topic.isIdle)
    }

    /// Only an idle live topic may leave, after the linger; one kept by the hub goes back live after its pending messages.
    @Test func leavingAndStaying() {
        var topic = liveTopic(events: 2)
        let start = ContinuousClock.now
        topic.subscriberArrived()
        #expect(topic.mayLeave(subscribed: false, now: start, linger: .seconds(5)) == false)
        topic.subscriberRegistered()
        #expect(topic.mayLeave(subscribed: true, now: start, linger: .seconds(5)) == false)
        #expect(topic.mayLeave(subscribed: false, now: start, linger: .seconds(5)) == false)
        #expect(topic.mayLeave(subscribed: false, now: start + .seconds(5), linger: .seconds(5)) == true)
        topic.leave()
        _ = topic.received(message(.events, 3))
        topic.stayed()
        #expect(topic.nextPending() == .apply(message(.events, 3)))
        #expect(topic.nextPending() == .live)
        #expect(topic.isLive && topic.phase == .live(ahead: AheadMessages()))
    }

    /// A topic the hub forgot while a subscriber arrived starts from nothing with a sync.
    @Test func forgottenButWantedSyncsFromNothing() {
        var topic = liveTopic(state: 4, events: 7)
        topic.leave()
        #expect(topic.forgottenButWanted() == .sync)
        #expect(topic.takeSync()! == (0, 0))
    }

    /// Redis's ids raised (a `Last-Event-ID` past what Redis held) while the topic's sync is
    /// already sent: Redis may have run that sync first, so the topic syncs once more before it
    /// goes live; raised before the sync is sent, that sync is enough. (Before, the topic went
    /// live on the older reply, and a subscriber resuming past Redis's empty ids waited out the
    /// fence's 500 ms.)
    @Test func idsRaisedWhileASyncIsSentSyncAgainBeforeLive() {
        var topic = FollowedTopic()
        #expect(topic.takeSubscribe() == true)
        #expect(topic.subscribed() == .sync)
        #expect(topic.idsRaised() == .none)       // Not sent yet: that sync follows the raise.
        #expect(topic.takeSync()! == (0, 0))
        #expect(topic.idsRaised() == .none)       // Sent: it may predate the raise.
        topic.synced(state: 0, events: 0)
        #expect(topic.nextPending() == .sync)     // Not live on the older reply.
        #expect(!topic.isLive)
        #expect(topic.takeSync()! == (0, 0))
        topic.synced(state: 0, events: 41)
        #expect(topic.nextPending() == .live)
        #expect(topic.lastEvents == 41)

        var once = FollowedTopic()
        _ = once.takeSubscribe()
        _ = once.subscribed()
        _ = once.idsRaised()
        _ = once.takeSync()
        once.synced(state: 0, events: 41)
        #expect(once.nextPending() == .live)      // Raised before the send: no second sync.

        var overdue = FollowedTopic()                // A fence overdue meanwhile is no raise:
        _ = overdue.takeSubscribe()                  // the sent sync covers its fence read.
        _ = overdue.subscribed()
        _ = overdue.takeSync()
        #expect(overdue.resync() == .none)
        overdue.synced(state: 0, events: 3)
        #expect(overdue.nextPending() == .live)
    }

    /// Every phase's answer to every event that can come in it (impossible ones trap and are not driven here).
    @Test func everyPhaseAnswersTheEventsItCanHave() {
        var subscribing = FollowedTopic()
        #expect(subscribing.resync() == .none)
        #expect(subscribing.takeSync() == nil)
        #expect(subscribing.nextPending() == .none)  // A link lost while pending messages were applied.
        var syncing = liveTopic(events: 1)
        _ = syncing.resync()
        #expect(syncing.takeSubscribe() == false)
        #expect(syncing.resync() == .none)
        #expect(syncing.nextPending() == .none)  // A sync is due: it takes over.
        _ = syncing.takeSync()
        #expect(syncing.syncFailed() == .sync)
        #expect(syncing.takeSync()! == (0, 1))
        var leaving = liveTopic()
        leaving.leave()
        #expect(leaving.takeSync() == nil && leaving.takeSubscribe() == false && leaving.resync() == .none)
        #expect(leaving.linkLost().isEmpty)
        #expect(leaving.forgottenButWanted() == .none)  // Link lost meanwhile: ids forgotten, subscribes again.
        #expect(leaving.takeSubscribe() == true)
    }
}

/// The pub/sub payload the publish script writes.
struct ClusterMessageTests {
    /// Channel, id, event name and data (with line breaks) read back; malformed payloads are ignored.
    @Test func decodesPayloads() {
        let message = ClusterMessage(payload: Array("e42\nreading\nline 1\nline 2".utf8))
        #expect(message == ClusterMessage(channel: .events, id: 42, event: "reading", data: "line 1\nline 2"))
        #expect(ClusterMessage(payload: Array("s7\n\n".utf8)) == ClusterMessage(channel: .state, id: 7, event: nil, data: ""))
        for bad in ["", "x1\n\nv", "e\n\nv", "e0\n\nv", "e12", "e1\nno-second-lf", "e99999999999999999999\n\nv", "e1a\n\nv"] {
            #expect(ClusterMessage(payload: Array(bad.utf8)) == nil, "\(bad)")
        }
    }
}
