import Locking
import Synchronization

/// The tasks serving a server's connections, as children of a few discarding
/// task groups (shards) that are themselves children of the task serving them:
/// each connection is one structured task, cancelled when that task is, and
/// `serve(while:)` returns only once every one of them has ended.
///
/// Why several groups rather than one: the Swift runtime takes a finished child
/// out of its group by walking the group's list of children, so with n
/// connections in one group every ending connection cost O(n) under the group's
/// lock. The reliability soak measured 0.3 ms per ending stream with 10,000
/// open, and 3 s to end them all at shutdown (past the 2 s grace). Spread over
/// `shardCount` groups, each list is that many times shorter.
final class ConnectionGroups: Sendable {
    typealias Job = @Sendable () async -> Void

    /// Groups the connections are spread over, round-robin.
    static let shardCount = 32

    private let inboxes: [Inbox]
    private let nextShard = Atomic<UInt>(0)

    init(shards: Int = ConnectionGroups.shardCount) {
        precondition(shards > 0)
        inboxes = (0..<shards).map { _ in Inbox() }
    }

    /// Hands `job` to the next shard, whose group runs it as a child task, on
    /// `loop`'s thread when given (else where the group runs). Call it from within
    /// `serve(while:)`'s body.
    func start(on loop: EventLoop? = nil, _ job: @escaping Job) {
        let shard = nextShard.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(inboxes.count)
        inboxes[Int(shard)].push(Entry(run: job, loop: loop))
    }

    /// Runs the shards' groups as children of the calling task and `body` beside
    /// them; once `body` returns, waits for every job started to end.
    func serve(while body: () async -> Void) async {
        await withDiscardingTaskGroup { shards in
            for inbox in inboxes {
                shards.addTask {
                    await withDiscardingTaskGroup { group in
                        // Not cancellable on purpose: a job handed over must run (in a
                        // cancelled group it starts cancelled and closes its socket).
                        while let jobs = await inbox.take() {
                            for job in jobs { group.addTask(executorPreference: job.loop, operation: job.run) }
                        }
                    }
                }
            }
            await body()
            for inbox in inboxes { inbox.finish() }
        }
    }

    /// A job as the inboxes hold it. A struct, not the bare closure: an array of
    /// closures stores them reabstracted, and each conversion back is one more
    /// thunk frame that the connection's task keeps for its whole life.
    private struct Entry: Sendable {
        let run: Job
        let loop: EventLoop?
    }

    /// One shard's jobs not yet added to its group. The queue is as long as
    /// the connections accepted since the shard last ran, each already an open
    /// descriptor, so the descriptor limit bounds it.
    private final class Inbox: Sendable {
        private struct State {
            var jobs: [Entry] = []
            var waiter: CheckedContinuation<[Entry]?, Never>?
            var finished = false
        }

        private let state = Locked(State())

        func push(_ job: Entry) {
            let waiter = state.withLock { state -> CheckedContinuation<[Entry]?, Never>? in
                precondition(!state.finished, "a connection started after its server stopped accepting")
                guard let waiter = state.waiter else {
                    state.jobs.append(job)
                    return nil
                }
                state.waiter = nil
                return waiter
            }
            waiter?.resume(returning: [job])
        }

        /// No job comes any more: `take` returns nil once the queue is empty.
        func finish() {
            let waiter = state.withLock { state -> CheckedContinuation<[Entry]?, Never>? in
                state.finished = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }

        /// Every job queued, waiting for one if none is; nil once finished and empty.
        func take() async -> [Entry]? {
            await withCheckedContinuation { (continuation: CheckedContinuation<[Entry]?, Never>) in
                let ready = state.withLock { state -> [Entry]?? in
                    if !state.jobs.isEmpty {
                        defer { state.jobs = [] }
                        return .some(state.jobs)
                    }
                    if state.finished { return .some(nil) }
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        }
    }
}
