import Glibc
import Locking
import Synchronization

/// The event loop is also an executor: tasks that prefer it (`HTTPServer`
/// runs every connection so) and actors that name its `actorExecutor` run
/// their jobs on the loop thread, between two `epoll_wait` calls, like Redis's
/// or nginx's one thread. A connection's read, parse, handler and write then
/// run where its readiness arrives, without a thread hop or a context switch
/// per request, and jobs queued while the loop is awake cost no wake-up.
///
/// What runs here must not block: it is the same rule as for the cooperative
/// pool, and it already holds for everything built on `EventLoop.wait`.
extension EventLoop: TaskExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        jobQueue.append(.task(UnownedJob(job)))
    }

    /// Whether the caller runs on the loop thread.
    public var isLoopThread: Bool { jobQueue.isLoopThread }

    /// Suspends for `LoopJobQueue.maxDeferredTurns` turns of the loop: a task
    /// that writes what gathered in a queue (a subscriber) calls it first, so
    /// that the work already queued (publishes among it) adds to this write
    /// instead of to the next one. One resumption, where two `Task.yield()` cost
    /// four jobs.
    public func afterQueuedWork() async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            jobQueue.deferTurns(continuation)
        }
        jobQueue.passResumeFence()
    }
}

/// The loop thread as the serial executor of an actor (the gateway's hub):
/// its jobs join the loop's queue, and the one thread runs them one at a time.
public final class LoopActorExecutor: SerialExecutor {
    private let queue: LoopJobQueue

    init(queue: LoopJobQueue) {
        self.queue = queue
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        queue.append(.actor(UnownedJob(job)))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(queue.isLoopThread, "not on the event loop's thread")
    }
}

/// A job for the loop thread: a task's, or an actor's (run isolated to it).
enum LoopJob {
    case task(UnownedJob)
    case actor(UnownedJob)
}

/// The jobs waiting for the loop thread, shared by the loop (its task
/// executor) and its actor executor; the loop thread runs them in batches.
final class LoopJobQueue: Sendable {
    private struct State {
        var pending: [LoopJob] = []
        /// The loop sleeps in `epoll_wait`: the next job writes the eventfd.
        var loopIsWaiting = false
        /// Tasks in `afterQueuedWork`, by the turn they came in (modulo the ring's size):
        /// a task that came in turn t goes on when turn t + `maxDeferredTurns` ends.
        var deferred = [[UnsafeContinuation<Void, Never>]](repeating: [], count: Int(LoopJobQueue.maxDeferredTurns) + 1)
        /// Batches run so far.
        var turn: UInt64 = 0

        var hasDeferred: Bool { deferred.contains { !$0.isEmpty } }

        /// After adding work: whether the loop sleeps and must be woken (once: one
        /// wake-up is enough for every job until it runs).
        mutating func takeWakeUp() -> Bool {
            defer { loopIsWaiting = false }
            return loopIsWaiting
        }
    }

    /// Turns of the loop a deferred task waits (3 measured better than 2 for
    /// 10,000 subscribers of one topic, and as well as two `Task.yield()`).
    static let maxDeferredTurns: UInt64 = 3

    private let state = Locked(State())
    /// A byte, not `()`: an empty value's address, which TSan sees written by
    /// `withLock`, can be the next field's.
    private let resumeFence = Locked<UInt8>(0)
    private let wake: @Sendable () -> Void
    /// The loop thread's `pthread_t`, set when it starts.
    private let loopThread = Atomic<UInt>(0)

    init(wake: @escaping @Sendable () -> Void) {
        self.wake = wake
    }

    func deferTurns(_ continuation: UnsafeContinuation<Void, Never>) {
        let wakeLoop = state.withLock { state in
            state.deferred[Int(state.turn % UInt64(state.deferred.count))].append(continuation)
            return state.takeWakeUp()
        }
        if wakeLoop { wake() }
    }

    func append(_ job: LoopJob) {
        let wakeLoop = state.withLock { state in
            state.pending.append(job)
            return state.takeWakeUp()
        }
        if wakeLoop { wake() }
    }

    var isLoopThread: Bool {
        pthread_equal(pthread_self(), loopThread.load(ordering: .acquiring)) != 0
    }

    /// Called once, by the loop thread as it starts.
    func loopThreadStarted() {
        loopThread.store(pthread_self(), ordering: .releasing)
    }

    /// Runs the jobs queued so far (not those they queue: the loop polls
    /// between two batches, so descriptors are never starved by jobs).
    func runQueued(into batch: inout [LoopJob], resuming due: inout [UnsafeContinuation<Void, Never>],
                   task: UnownedTaskExecutor, actor: UnownedSerialExecutor) {
        state.withLock { state in swap(&batch, &state.pending) }
        for job in batch {
            switch job {
            // A task's job runs as nonisolated code preferring the loop, so its
            // calls into other nonisolated async code switch nothing.
            case .task(let job): job.runSynchronously(on: task)
            case .actor(let job): job.runSynchronously(isolatedTo: actor, taskExecutor: task)
            }
        }
        batch.removeAll(keepingCapacity: true)
        // Deferred tasks go on once they waited their turns. Not sooner when the
        // queue runs dry: measured, that gathered too little (more writes, fewer
        // deliveries per second), and an idle loop turns in microseconds anyway
        // (it does not sleep while tasks are deferred).
        state.withLock { state in
            state.turn += 1
            // The bucket of turn (turn - maxDeferredTurns), the next one to fill.
            swap(&due, &state.deferred[Int((state.turn + 1) % UInt64(state.deferred.count))])
        }
        resumeFence.withLock { _ in
            for continuation in due { continuation.resume() }
        }
        due.removeAll(keepingCapacity: true)
    }

    /// Taken by a deferred task once it is back: the loop resumed it inside this
    /// lock, so everything the loop did in `resume` happens before whatever the task
    /// does next. The runtime orders these already; ThreadSanitizer could not see it
    /// (it reported the loop's write of the resumption into the task's frame racing
    /// the task's next use of that memory), and it sees `Locked`.
    func passResumeFence() {
        resumeFence.withLock { _ in }
    }

    /// The `epoll_wait` timeout: none when jobs wait, else `tick`; when it is
    /// `tick`, an `append` from now on wakes the loop.
    func pollTimeout(tick: Int32) -> Int32 {
        state.withLock { state in
            guard state.pending.isEmpty && !state.hasDeferred else { return 0 }
            state.loopIsWaiting = true
            return tick
        }
    }

    /// Back from `epoll_wait`: jobs queued from now on need no wake-up.
    func loopIsAwake() {
        state.withLock { $0.loopIsWaiting = false }
    }
}
