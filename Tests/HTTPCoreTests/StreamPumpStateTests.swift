import Testing
@testable import HTTPCore

/// Who writes a pumped stream when: the task or the loop, never both.
struct StreamPumpStateTests {
    typealias State = StreamPumpState<String, Int>

    @Test func theLoopFlushesOnlyAfterTheTaskRearms() {
        var state = State()
        #expect(state.phase == .taskWriting)
        let result1 = state.beginFlush()
        #expect(!result1)
        let result2 = state.sourceIsReady()
        #expect(!result2)  // the task's rearm schedules anyway
        let result3 = state.rearm()
        #expect(result3)
        #expect(state.phase == .scheduled)
        let result4 = state.sourceIsReady()
        #expect(!result4)  // already listed
        let result5 = state.beginFlush()
        #expect(result5)
        let result6 = state.tookNothing()
        #expect(result6 == .stop)
        #expect(state.phase == .armed)
        let result7 = state.sourceIsReady()
        #expect(result7)
        #expect(state.phase == .scheduled)
    }

    /// `ready` arriving while the flush takes (the source registered it and a frame
    /// came at once) makes the flush take again instead of arming and losing it.
    @Test func readyDuringAFlushTakesAgain() {
        var state = State()
        _ = state.rearm()
        _ = state.beginFlush()
        let result8 = state.sourceIsReady()
        #expect(!result8)
        let result9 = state.tookNothing()
        #expect(result9 == .takeAgain)
        let result10 = state.tookNothing()
        #expect(result10 == .stop)
        #expect(state.phase == .armed)
    }

    @Test func aBlockedFlushHandsTheRestToTheParkedTask() {
        var state = State()
        _ = state.rearm()
        let result11 = state.wait("task")
        #expect(result11 == nil)
        _ = state.beginFlush()
        let resumed = state.handOver(7)
        #expect(resumed?.0 == "task")
        guard case .write(7)? = resumed?.1 else { Issue.record("expected the rest"); return }
        #expect(state.phase == .taskWriting)
        let result12 = state.beginFlush()
        #expect(!result12)  // the loop keeps off while the task writes
        let result13 = state.rearm()
        #expect(result13)
    }

    @Test func aHandOverBeforeTheTaskParksIsCollected() {
        var state = State()
        _ = state.rearm()
        _ = state.beginFlush()
        let result14 = state.handOver(3)
        #expect(result14 == nil)
        let waited = state.wait("task")
        guard case .write(3)? = waited else { Issue.record("expected the rest"); return }
    }

    @Test func endingResumesTheTaskOnceAndIsTerminal() {
        var state = State()
        _ = state.rearm()
        let result15 = state.wait("task")
        #expect(result15 == nil)
        let (first, task) = state.end()
        #expect(first && task == "task")
        let again = state.end()
        #expect(!again.first && again.resume == nil)
        let result16 = state.sourceIsReady()
        #expect(!result16)
        let result17 = state.beginFlush()
        #expect(!result17)
        let result18 = state.rearm()
        #expect(!result18)
    }

    /// The stream ends while the task writes a rest: the task's next wait sees the end.
    @Test func endingWhileTheTaskWritesIsSeenAtItsNextWait() {
        var state = State()
        _ = state.rearm()
        _ = state.beginFlush()
        _ = state.handOver(1)
        let waited = state.wait("task")
        guard case .write? = waited else { Issue.record("expected the rest"); return }
        let result19 = state.end()
        #expect(result19.resume == nil)
        let result20 = state.rearm()
        #expect(!result20)
        let waitedAgain = state.wait("task")
        guard case .ended? = waitedAgain else { Issue.record("expected the end"); return }
    }
}
