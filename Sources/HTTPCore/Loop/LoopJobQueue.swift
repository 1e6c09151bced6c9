import Glibc
import Locking
import Synchronization

/// The jobs waiting for the loop thread, shared by the loop (its task
/// executor) and its actor executor, and the work for the end of its turn: a
/// `LoopScheduler` behind a lock. The rules are the scheduler's; this only
/// takes the lock, runs what it hands over and writes the eventfd it asks for.
final class LoopJobQueue: Sendable {
    private let scheduler = Locked(LoopScheduler<LoopJob, any TurnEndWork>())
    private let wake: @Sendable () -> Void
    /// The loop thread's `pthread_t`, set when it starts.
    private let loopThread = Atomic<UInt>(0)
    /// What this loop's thread readied for other loops, not handed over yet.
    private let outboxes = LoopOutboxes()
    /// Batches of turn-end work other loops handed over (one per source loop's batch).
    let handoffsReceived = Atomic<Int>(0)

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    func append(_ job: LoopJob) {
        if scheduler.withLock({ $0.enqueue(job) }) == .wakeLoop { wake() }
    }

    /// From this loop's thread or a thread that is no loop's: queued at once. From
    /// another loop's thread: kept in that loop's outbox and handed over with the
    /// rest of its batch (`LoopOutboxes`).
    func atTurnEnd(_ work: any TurnEndWork) {
        if let here = LoopJobQueue.current, here !== self {
            here.outboxes.add(work, for: self)
            return
        }
        if scheduler.withLock({ $0.atTurnEnd(work) }) == .wakeLoop { wake() }
    }

    /// Another loop's batch of turn-end work for this loop.
    func receive(_ works: [any TurnEndWork]) {
        handoffsReceived.add(1, ordering: .relaxed)
        if scheduler.withLock({ $0.atTurnEnd(contentsOf: works) }) == .wakeLoop { wake() }
    }

    /// Hands other loops what this loop's thread readied for them. On the loop thread.
    func flushOutboxes() {
        outboxes.flush()
    }

    var isLoopThread: Bool {
        pthread_equal(pthread_self(), loopThread.load(ordering: .acquiring)) != 0
    }

    /// Called once, by the loop thread as it starts.
    func loopThreadStarted() {
        markCurrentThread()
        loopThread.store(pthread_self(), ordering: .releasing)
    }

    /// One turn: runs the jobs queued so far and, in a few more passes, those they
    /// queue (the rest wait for the next turn: the loop polls between two turns, so
    /// descriptors are never starved by jobs); when turn-end work waits, `pollReady`
    /// (a poll without waiting, its readiness dispatched: true when it found any) and
    /// one more round of passes for what it readied; then the turn-end work queued
    /// until the jobs ended (issues 24 and 27, `LoopScheduler`). `batch` and `work` are
    /// the loop's reusable buffers.
    func runTurn(jobs batch: inout [LoopJob], work: inout [any TurnEndWork],
                 task: UnownedTaskExecutor, actor: UnownedSerialExecutor, pollReady: () -> Bool) {
        scheduler.withLock { $0.beginTurn(into: &batch) }
        runPasses(&batch, task: task, actor: actor)
        if scheduler.withLock({ $0.hasTurnEndWork }), pollReady(), scheduler.withLock({ $0.beginRound(into: &batch) }) {
            runPasses(&batch, task: task, actor: actor)
        }
        // Before this loop's own writes: the other loops can write theirs meanwhile.
        outboxes.flush()
        scheduler.withLock { $0.endTurn(into: &work) }
        for item in work { item.runAtTurnEnd() }
        work.removeAll(keepingCapacity: true)
        outboxes.flush()
    }

    /// Runs `batch` and then, pass after pass, the jobs each pass queued, up to the
    /// scheduler's bound.
    private func runPasses(_ batch: inout [LoopJob], task: UnownedTaskExecutor, actor: UnownedSerialExecutor) {
        repeat {
            for job in batch {
                switch job {
                // A task's job runs as nonisolated code preferring the loop, so its
                // calls into other nonisolated async code switch nothing.
                case .task(let job): job.runSynchronously(on: task)
                case .actor(let job): job.runSynchronously(isolatedTo: actor, taskExecutor: task)
                }
            }
            batch.removeAll(keepingCapacity: true)
        } while scheduler.withLock({ $0.nextPass(into: &batch) })
    }

    /// The `epoll_wait` timeout: 0 when work waits, else `tick`; when it is `tick`,
    /// an addition from now on wakes the loop.
    func pollTimeout(tick: Int32) -> Int32 {
        scheduler.withLock { $0.park() } == .tick ? tick : 0
    }

    /// Back from `epoll_wait`: work added from now on needs no wake-up.
    func loopIsAwake() {
        scheduler.withLock { $0.unpark() }
    }
}
