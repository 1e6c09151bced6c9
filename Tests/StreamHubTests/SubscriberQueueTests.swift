import Testing
@testable import StreamHub

struct SubscriberQueueTests {
    private let t0 = ContinuousClock.now
    private func frame(_ byte: UInt8) -> [UInt8] { [byte] }

    /// A new subscriber's first frames fit whatever is already queued (live frames from
    /// another shard may have filled the limit): the limit grows by them in the same
    /// step; the next live push past it overflows as usual.
    @Test func firstFramesComeOnTopOfTheLimit() {
        var queue = SubscriberQueue(mode: .bounded(limit: 2), marked: true, now: t0)
        _ = queue.push(frame(1), mark: FrameMark(slot: 0, id: 1), now: t0)
        _ = queue.push(frame(2), mark: FrameMark(slot: 0, id: 2), now: t0)
        let first = queue.pushFirst([(frame(7), FrameMark(slot: 1, id: 7)), (frame(8), FrameMark(slot: 1, id: 8)),
                                     (frame(9), FrameMark(slot: 1, id: 9))], now: t0)
        #expect(first.queued == 3)
        #expect(queue.finishReason == nil)
        guard case .overflow = queue.push(frame(3), mark: FrameMark(slot: 0, id: 3), now: t0) else {
            Issue.record("the limit did not stay at 2 + 3")
            return
        }
        #expect(queue.pushFirst([(frame(4), FrameMark(slot: 0, id: 4))], now: t0).queued == 0)
    }

    /// Values of a several-topic state stream that came shard by shard go out in slot order.
    @Test func pendingInSlotOrder() {
        var queue = SubscriberQueue(mode: .latestPerSlot, marked: true, now: t0)
        _ = queue.pushFirst([(frame(0), FrameMark(slot: 0, id: 1)), (frame(2), FrameMark(slot: 2, id: 1))], now: t0)
        _ = queue.pushFirst([(frame(1), FrameMark(slot: 1, id: 1)), (frame(3), FrameMark(slot: 3, id: 1))], now: t0)
        queue.orderPendingBySlot()
        #expect(queue.take() == .batch([[0], [1], [2], [3]], marks: (0...3).map { FrameMark(slot: $0, id: 1) }, events: 4))
    }

    /// On the state channel a push replaces the pending frame: at most one waits.
    @Test func latestKeepsOnlyTheNewest() {
        var queue = SubscriberQueue(mode: .latest, now: t0)
        for byte in UInt8(1)...5 { _ = queue.push(frame(byte), now: t0) }
        #expect(queue.take() == .batch([[5]], marks: [], events: 1))
        #expect(queue.take() == .empty)
    }

    /// On the events channel the push that finds `limit` pending overflows and drops them.
    @Test func boundedOverflowsAtLimit() {
        var queue = SubscriberQueue(mode: .bounded(limit: 3), now: t0)
        for byte in UInt8(1)...3 {
            guard case .queued = queue.push(frame(byte), now: t0) else { Issue.record("not queued"); return }
        }
        guard case .overflow(let finish) = queue.push(frame(4), now: t0) else { Issue.record("no overflow"); return }
        #expect(finish.reason == .overflow)
        #expect(queue.pending.isEmpty)
        #expect(queue.take() == .finished)
        guard case .dropped = queue.push(frame(5), now: t0) else { Issue.record("pushed after finish"); return }
    }

    /// Finishing twice yields one finish; handlers registered later are told at once.
    @Test func finishIsOnce() {
        var queue = SubscriberQueue(mode: .bounded(limit: 3), now: t0)
        #expect(queue.onFinish { _ in } == nil)
        let first = queue.finish(.cancelled)
        #expect(first?.handlers.count == 1)
        #expect(queue.finish(.shutdown) == nil)
        #expect(queue.finishReason == .cancelled)
        #expect(queue.onFinish { _ in } == .cancelled)
    }

    /// A heartbeat is queued only into an empty queue idle for at least `idleFor`, and
    /// is not counted as an event.
    @Test func heartbeatOnlyWhenIdle() {
        var queue = SubscriberQueue(mode: .bounded(limit: 2), now: t0)
        #expect(queue.heartbeat(now: t0 + .seconds(9), idleFor: .seconds(10)) == nil)
        #expect(queue.heartbeat(now: t0 + .seconds(10), idleFor: .seconds(10)) != nil)
        #expect(queue.heartbeat(now: t0 + .seconds(30), idleFor: .seconds(10)) == nil)  // Not empty.
        _ = queue.push(frame(1), now: t0 + .seconds(30))
        _ = queue.push(frame(2), now: t0 + .seconds(30))  // The heartbeat does not use up the limit.
        #expect(queue.take() == .batch([SSEEncoder.heartbeat, [1], [2]], marks: [], events: 2))
    }
}

struct MarkedQueueTests {
    /// A marked queue keeps each frame's mark; on latestPerSlot a push replaces its slot's pending frame and goes last.
    @Test func latestPerSlotKeepsNewestPerTopic() {
        let now = ContinuousClock.now
        var queue = SubscriberQueue(mode: .latestPerSlot, marked: true, now: now)
        _ = queue.push([1], mark: FrameMark(slot: 0, id: 1), now: now)
        _ = queue.push([2], mark: FrameMark(slot: 1, id: 1), now: now)
        _ = queue.push([3], mark: FrameMark(slot: 0, id: 2), now: now)
        #expect(queue.take() == .batch([[2], [3]], marks: [FrameMark(slot: 1, id: 1), FrameMark(slot: 0, id: 2)], events: 2))
        _ = queue.heartbeat(now: now + .seconds(20), idleFor: .seconds(15))
        _ = queue.push([4], mark: FrameMark(slot: 1, id: 2), now: now)
        #expect(queue.take() == .batch([SSEEncoder.heartbeat, [4]], marks: [.none, FrameMark(slot: 1, id: 2)], events: 1))
    }
}
