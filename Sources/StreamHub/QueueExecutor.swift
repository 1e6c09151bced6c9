import Dispatch

/// A serial executor on a private Dispatch queue: where a `Hub` runs when it is
/// given no executor of its own (Linux's Dispatch has no `DispatchSerialQueue`
/// executor). Jobs run one at a time, in the order enqueued.
public final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
