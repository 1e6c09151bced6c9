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

    /// Another loop's batch of readied streams is one addition: one wake-up for all
    /// of it while parked, none while awake, none for an empty batch.
    @Test func aHandedOverBatchWakesAParkedLoopOnce() {
        var scheduler = Scheduler()
        let parked = scheduler.park()
        #expect(parked == .tick)
        let empty = scheduler.atTurnEnd(contentsOf: [])
        #expect(empty == .none)
        let first = scheduler.atTurnEnd(contentsOf: ["a", "b", "c"])
        #expect(first == .wakeLoop)
        let second = scheduler.atTurnEnd(contentsOf: ["d"])
        #expect(second == .none)
        scheduler.unpark()
        #expect(turn(&scheduler) == ([], ["a", "b", "c", "d"]))
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

    /// Jobs queued by a turn's jobs run in the next turn unless the loop makes another
    /// pass (`nextPass`, below; here it makes none); turn-end work queued
    /// before or during turn t runs at the end of turn t, after all of that turn's
    /// jobs (a publish's reply, written in the publish's own job, goes out before the
    /// fan-out; issue 27); work queued by the turn-end work itself, or while the loop
    /// is between turns or parked, runs at the end of the very next turn.
    @Test func workRunsInTheTurnTheRulesSay() {
        var scheduler = Scheduler()
        _ = scheduler.atTurnEnd("queued before turn 0")
        _ = scheduler.enqueue(1)
        var jobs: [Int] = []
        var work: [String] = []
        scheduler.beginTurn(into: &jobs)
        #expect(jobs == [1])
        // Job 1 (a publish, which writes its reply) readies a subscriber and queues job 2.
        let wake1 = scheduler.enqueue(2)
        let wake2 = scheduler.atTurnEnd("readied in turn 0")
        #expect(wake1 == .none && wake2 == .none)
        scheduler.endTurn(into: &work)
        #expect(work == ["queued before turn 0", "readied in turn 0"])
        #expect(scheduler.turn == 1)
        jobs.removeAll()
        work.removeAll()
        // Work queued by turn-end work (after turn 0 ended) waits for turn 1's end.
        let wake3 = scheduler.atTurnEnd("queued by a flush")
        #expect(wake3 == .none)
        // Not parked: something waits for turn 1.
        let timeout = scheduler.park()
        #expect(timeout == .immediate)
        scheduler.unpark()
        scheduler.beginTurn(into: &jobs)
        #expect(jobs == [2])
        scheduler.endTurn(into: &work)
        #expect(work == ["queued by a flush"])
        #expect(turn(&scheduler) == ([], []))
        #expect(scheduler.turn == 3)
        let idle = scheduler.park()
        #expect(idle == .tick)
    }

    /// An idle loop woken by turn-end work runs it at the end of the turn it wakes for.
    @Test func workAddedWhileParkedRunsInTheNextTurn() {
        var scheduler = Scheduler()
        _ = scheduler.park()
        let wake = scheduler.atTurnEnd("flush")
        #expect(wake == .wakeLoop)
        scheduler.unpark()
        #expect(turn(&scheduler) == ([], ["flush"]))
        let idle = scheduler.park()
        #expect(idle == .tick)
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

    /// Jobs queued by a turn's jobs (a Redis reply resuming its publisher, a command
    /// waking its connection's writer) run in further passes of the same turn, before
    /// its end work, up to `passes` passes in all; what the last pass queues waits for
    /// the next turn, which the loop polls for first.
    @Test func jobsQueuedByJobsRunInLaterPassesOfTheSameTurnUpToTheBound() {
        var scheduler = LoopScheduler<Int, String>(passes: 3)
        _ = scheduler.enqueue(1)
        var jobs: [Int] = []
        var work: [String] = []
        scheduler.beginTurn(into: &jobs)
        #expect(jobs == [1])
        // Job 1 (a publish on Redis) wakes the connection's writer, job 2.
        _ = scheduler.enqueue(2)
        jobs.removeAll()
        let pass1 = scheduler.nextPass(into: &jobs)
        #expect(pass1)
        #expect(jobs == [2])
        // Job 2 readies a fan-out and queues job 3.
        _ = scheduler.enqueue(3)
        _ = scheduler.atTurnEnd("fan-out")
        jobs.removeAll()
        let pass2 = scheduler.nextPass(into: &jobs)
        #expect(pass2)
        #expect(jobs == [3])
        // The third pass was the last: job 4 waits for the next turn.
        _ = scheduler.enqueue(4)
        jobs.removeAll()
        let pass3 = scheduler.nextPass(into: &jobs)
        #expect(!pass3)
        #expect(jobs.isEmpty)
        scheduler.endTurn(into: &work)
        #expect(work == ["fan-out"])
        let timeout = scheduler.park()
        #expect(timeout == .immediate)
        scheduler.unpark()
        jobs.removeAll()
        work.removeAll()
        scheduler.beginTurn(into: &jobs)
        #expect(jobs == [4])
        // Nothing queued: no second pass.
        jobs.removeAll()
        let pass4 = scheduler.nextPass(into: &jobs)
        #expect(!pass4)
        scheduler.endTurn(into: &work)
        #expect(work.isEmpty)
        #expect(scheduler.turn == 2)
    }

    /// One pass a turn is the rule before issue 24: every job a job queues waits for the next turn.
    @Test func onePassATurnLeavesQueuedJobsForTheNextTurn() {
        var scheduler = LoopScheduler<Int, String>(passes: 1)
        _ = scheduler.enqueue(1)
        var jobs: [Int] = []
        scheduler.beginTurn(into: &jobs)
        _ = scheduler.enqueue(2)
        jobs.removeAll()
        let pass5 = scheduler.nextPass(into: &jobs)
        #expect(!pass5)
        var work: [String] = []
        scheduler.endTurn(into: &work)
        #expect(turn(&scheduler) == ([2], []))
    }

    /// A turn with end work looks once more, without waiting, before running it: what
    /// that poll readied (a Redis reply to the turn's command) runs in a new round of
    /// passes, and the end work it queues joins this turn's. Without end work there is
    /// no round (the next turn starts at once anyway).
    @Test func aTurnWithEndWorkRunsWhatAPollReadiedBeforeIt() {
        var scheduler = LoopScheduler<Int, String>(passes: 2)
        var jobs: [Int] = []
        var work: [String] = []
        // Without end work: nothing to look for.
        _ = scheduler.enqueue(1)
        scheduler.beginTurn(into: &jobs)
        jobs.removeAll()
        let step1 = scheduler.nextPass(into: &jobs)
        #expect(!step1)
        #expect(!scheduler.hasTurnEndWork)
        scheduler.endTurn(into: &work)
        // A publish (job 2) readies a fan-out and sends its command; its writer (job 3)
        // runs in the second pass, which is the last.
        _ = scheduler.enqueue(2)
        scheduler.beginTurn(into: &jobs)
        jobs.removeAll()
        _ = scheduler.atTurnEnd("fan-out")
        _ = scheduler.enqueue(3)
        let step2 = scheduler.nextPass(into: &jobs)
        #expect(step2 && jobs == [3])
        jobs.removeAll()
        let step3 = scheduler.nextPass(into: &jobs)
        #expect(!step3)
        #expect(scheduler.hasTurnEndWork)
        // Nothing was readied: no round.
        let step4 = scheduler.beginRound(into: &jobs)
        #expect(!step4)
        // The poll readied the reply's reader (job 4): a round of up to two passes.
        _ = scheduler.enqueue(4)
        let step5 = scheduler.beginRound(into: &jobs)
        #expect(step5 && jobs == [4])
        jobs.removeAll()
        // The reader resumes the publisher (job 5), whose reply readies more fan-out.
        _ = scheduler.enqueue(5)
        let step6 = scheduler.nextPass(into: &jobs)
        #expect(step6 && jobs == [5])
        jobs.removeAll()
        _ = scheduler.atTurnEnd("its own subscribers")
        _ = scheduler.enqueue(6)
        let step7 = scheduler.nextPass(into: &jobs)
        #expect(!step7)
        scheduler.endTurn(into: &work)
        #expect(work == ["fan-out", "its own subscribers"])
        work.removeAll()
        #expect(turn(&scheduler) == ([6], []))
    }
}
