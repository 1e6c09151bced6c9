import Testing
@testable import HTTPCore

/// The loop's scheduling rules, driven turn by turn without a thread or a clock.
struct LoopSchedulerTests {
    typealias Scheduler = LoopScheduler<Int, String>

    /// Runs one turn: the jobs it hands over, then the turn-end work.
    private func turn(_ scheduler: inout Scheduler) -> (jobs: [Int], work: [String]) {
        var jobs: [Int] = []
        var work: [String] = []
        scheduler.beginTurn(into: &jobs)
        scheduler.endTurn(into: &work)
        return (jobs, work)
    }

    @Test func oneAdditionWhileParkedWakesTheLoopExactlyOnce() {
        var scheduler = Scheduler()
        let result1 = scheduler.park()
        #expect(result1 == .tick)
        let result2 = scheduler.enqueue(1)
        #expect(result2 == .wakeLoop)
        let result3 = scheduler.enqueue(2)
        #expect(result3 == .none)
        let result4 = scheduler.atTurnEnd("a")
        #expect(result4 == .none)
        scheduler.unpark()
        #expect(turn(&scheduler) == ([1, 2], ["a"]))
    }

    @Test func turnEndWorkAloneWakesAParkedLoop() {
        var scheduler = Scheduler()
        let result5 = scheduler.park()
        #expect(result5 == .tick)
        let result6 = scheduler.atTurnEnd("flush")
        #expect(result6 == .wakeLoop)
        let result7 = scheduler.enqueue(1)
        #expect(result7 == .none)
    }

    @Test func anAwakeLoopIsNeverWoken() {
        var scheduler = Scheduler()
        let result8 = scheduler.enqueue(1)
        #expect(result8 == .none)
        let result9 = scheduler.atTurnEnd("a")
        #expect(result9 == .none)
        // Work is waiting: the loop polls without sleeping, and stays awake.
        let result10 = scheduler.park()
        #expect(result10 == .immediate)
        #expect(!scheduler.isParked)
        let result11 = scheduler.enqueue(2)
        #expect(result11 == .none)
    }

    /// Jobs queued by a turn's jobs run in the next turn; turn-end work queued by a
    /// turn's jobs runs at the end of that same turn; work queued by turn-end work
    /// runs at the end of the next turn.
    @Test func workRunsInTheTurnTheRulesSay() {
        var scheduler = Scheduler()
        _ = scheduler.enqueue(1)
        var jobs: [Int] = []
        var work: [String] = []
        scheduler.beginTurn(into: &jobs)
        #expect(jobs == [1])
        // Job 1 runs: it queues job 2 and a flush.
        _ = scheduler.enqueue(2)
        _ = scheduler.atTurnEnd("flush of turn 0")
        scheduler.endTurn(into: &work)
        #expect(work == ["flush of turn 0"])
        #expect(scheduler.turn == 1)
        // The flush runs and queues another.
        _ = scheduler.atTurnEnd("queued by a flush")
        jobs.removeAll()
        work.removeAll()
        let result12 = scheduler.park()
        #expect(result12 == .immediate)
        scheduler.unpark()
        #expect(turn(&scheduler) == ([2], ["queued by a flush"]))
        #expect(scheduler.turn == 2)
        let result13 = scheduler.park()
        #expect(result13 == .tick)
    }

    @Test func parkingOnlyWhenNothingWaits() {
        var scheduler = Scheduler()
        let result14 = scheduler.park()
        #expect(result14 == .tick)
        #expect(scheduler.isParked)
        scheduler.unpark()
        #expect(!scheduler.isParked)
        _ = scheduler.atTurnEnd("a")
        let result15 = scheduler.park()
        #expect(result15 == .immediate)
        _ = turn(&scheduler)
        let result16 = scheduler.park()
        #expect(result16 == .tick)
    }
}
