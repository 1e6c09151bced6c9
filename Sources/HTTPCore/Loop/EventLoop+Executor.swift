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

    /// Runs `work` on the loop thread at the end of the first turn that begins
    /// after this call (`LoopScheduler`): after that turn's jobs (publishers'
    /// replies among them), before the loop polls again. What the jobs of both
    /// turns gave a streaming response goes out then in one write (`StreamPump`).
    /// From any thread.
    func atTurnEnd(_ work: any TurnEndWork) {
        jobQueue.atTurnEnd(work)
    }
}
