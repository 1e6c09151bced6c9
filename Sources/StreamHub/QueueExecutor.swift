import Dispatch

/// A serial executor on a private Dispatch queue: where a `Hub` runs when it is
/// given no executor of its own (Linux's Dispatch has no `DispatchSerialQueue`
/// executor). Jobs run one at a time, in the order enqueued.
final class QueueExecutor: SerialExecutor {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedSerialExecutor()) }
    }

    func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}
