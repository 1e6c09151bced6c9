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

    /// True on the loop's thread: whatever runs there runs between two of the loop's
    /// jobs, never beside an actor job of this executor (one thread runs them all).
    public func isIsolatingCurrentContext() -> Bool? {
        queue.isLoopThread
    }
}
