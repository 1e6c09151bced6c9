@testable import StreamCluster
import StreamHub
import Testing

/// The follow state machine alone: which messages reach the hub, and when a topic syncs.
struct FollowedTopicTests {
    private func message(_ channel: Channel, _ id: UInt64) -> ClusterMessage {
        ClusterMessage(channel: channel, id: id, event: nil, data: "v\(id)")
    }

    /// A topic that is live after subscribing, a sync and its buffer.
    private func liveTopic(state: UInt64 = 0, events: UInt64 = 0) -> FollowedTopic {
        var topic = FollowedTopic()
        #expect(topic.takeSubscribe() == true)
        #expect(topic.subscribed() == .sync)
        _ = topic.takeSync()
        topic.synced(state: state, events: events)
        #expect(topic.nextBuffered().message == nil)
        #expect(topic.phase == .live)
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
        #expect(topic.nextBuffered().message?.id == 6)  // 5 is held already.
        #expect(topic.nextBuffered().message == nil)
        #expect(topic.phase == .live)
        #expect(topic.lastEvents == 6)
    }

    /// A live topic applies the next events id, skips held ones, and syncs again when an id is missing.
    @Test func aMissingEventsIDTriggersASync() {
        var topic = liveTopic(events: 3)
        #expect(topic.received(message(.events, 4)) == .apply(message(.events, 4)))
        #expect(topic.received(message(.events, 4)) == .none)
        #expect(topic.received(message(.events, 6)) == .sync)
        #expect(topic.phase == .syncing)
        #expect(topic.takeSync()! == (0, 4))
        topic.synced(state: 0, events: 6)
        #expect(topic.nextBuffered().message == nil)  // 6 came with the sync.
        #expect(topic.phase == .live)
    }

    /// State values may skip ids (only the newest matters) but never go back.
    @Test func stateAppliesOnlyNewerValues() {
        var topic = liveTopic(state: 2)
        #expect(topic.received(message(.state, 5)) == .apply(message(.state, 5)))
        #expect(topic.received(message(.state, 4)) == .none)
        #expect(topic.lastState == 5)
    }

    /// A buffered message past a hole asks for another sync instead of applying across it.
    @Test func aHoleInTheBufferSyncsAgain() {
        var topic = FollowedTopic()
        _ = topic.takeSubscribe()
        _ = topic.subscribed()
        _ = topic.takeSync()
        _ = topic.received(message(.events, 9))
        topic.synced(state: 0, events: 7)
        let next = topic.nextBuffered()
        #expect(next.message == nil && next.needsSync)
        #expect(topic.takeSync()! == (0, 7))
        topic.synced(state: 0, events: 8)
        #expect(topic.nextBuffered().message?.id == 9)
    }

    /// Past the buffer's bound, what waits is dropped and fetched by another sync.
    @Test func anOverflowingBufferIsFetchedAgain() {
        var topic = FollowedTopic()
        _ = topic.takeSubscribe()
        for id in 1...UInt64(FollowedTopic.bufferLimit + 1) {
            _ = topic.received(message(.events, id))
        }
        _ = topic.subscribed()
        _ = topic.takeSync()
        topic.synced(state: 0, events: 0)
        let next = topic.nextBuffered()
        #expect(next.message == nil && next.needsSync)
        #expect(topic.buffer.isEmpty)
    }

    /// Losing the link sends a topic back to subscribing and hands back its waiters.
    @Test func losingTheLinkStartsOver() async {
        var topic = liveTopic(events: 3)
        _ = topic.received(message(.events, 4))
        var failed = 0
        let answer = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            topic.waiters.append(.init(state: 0, events: 9, deadline: .now, resume: continuation))
            let waiters = topic.linkLost()
            failed = waiters.count
            for waiter in waiters { waiter.resume.resume(returning: false) }
        }
        #expect(failed == 1 && answer == false)
        #expect(topic.phase == .subscribing)
        #expect(topic.takeSubscribe() == true)
        #expect(topic.lastEvents == 4)  // The hub's copy stays; the next sync starts after it.
    }

    /// Only an idle live topic may leave; one kept by the hub goes back live after its buffer.
    @Test func leavingAndStaying() {
        var topic = liveTopic(events: 2)
        topic.pendingSubscribers = 1
        #expect(!topic.isIdle)
        topic.pendingSubscribers = 0
        topic.leave()
        _ = topic.received(message(.events, 3))
        _ = topic.stayed()
        #expect(topic.nextBuffered().message?.id == 3)
        #expect(topic.nextBuffered().message == nil)
        #expect(topic.phase == .live)
    }

    /// A topic the hub forgot while a subscriber arrived starts from nothing with a sync.
    @Test func forgottenButWantedSyncsFromNothing() {
        var topic = liveTopic(state: 4, events: 7)
        topic.leave()
        #expect(topic.forgottenButWanted() == .sync)
        #expect(topic.takeSync()! == (0, 0))
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
