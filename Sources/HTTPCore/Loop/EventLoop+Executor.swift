import Glibc
import Locking

/// The event loop is also an executor: tasks that prefer it (`HTTPServer`
/// runs every connection so) and actors that name it run their jobs on the
/// loop thread, between two `epoll_wait` calls, like Redis's or nginx's one
/// thread. A connection's read, parse, handler and write then run where its
/// readiness arrives, without a thread hop or a context switch per request,
/// and jobs queued while the loop is awake cost no wake-up.
///
/// What runs here must not block: it is the same rule as for the cooperative
/// pool, and it already holds for everything built on `EventLoop.wait`.
extension EventLoop: TaskExecutor, SerialExecutor {
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wakeLoop = jobs.withLock { jobs -> Bool in
            jobs.pending.append(job)
            guard jobs.loopIsWaiting else { return false }
            jobs.loopIsWaiting = false  // one wake-up is enough for every job until it runs
            return true
        }
        if wakeLoop { wake() }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func checkIsolated() {
        precondition(isLoopThread, "not on the event loop's thread")
    }

    /// Whether the caller runs on the loop thread.
    public var isLoopThread: Bool {
        pthread_equal(pthread_self(), loopThread.load(ordering: .acquiring)) != 0
    }

    /// Runs the jobs queued so far (not those they queue: the loop polls
    /// between two batches, so descriptors are never starved by jobs).
    func runQueuedJobs(into batch: inout [UnownedJob]) {
        jobs.withLock { jobs in swap(&batch, &jobs.pending) }
        let serial = asUnownedSerialExecutor()
        let task = asUnownedTaskExecutor()
        for job in batch { job.runSynchronously(isolatedTo: serial, taskExecutor: task) }
        batch.removeAll(keepingCapacity: true)
    }

    /// The `epoll_wait` timeout: none when jobs wait, else `tick`; when it is
    /// `tick`, an `enqueue` from now on writes the eventfd.
    func pollTimeout(tick: Int32) -> Int32 {
        jobs.withLock { jobs in
            guard jobs.pending.isEmpty else { return 0 }
            jobs.loopIsWaiting = true
            return tick
        }
    }

    /// Back from `epoll_wait`: jobs queued from now on need no wake-up.
    func loopIsAwake() {
        jobs.withLock { $0.loopIsWaiting = false }
    }
}

/// The jobs waiting for the loop thread, and whether it sleeps in `epoll_wait`.
struct LoopJobs {
    var pending: [UnownedJob] = []
    var loopIsWaiting = false
}
