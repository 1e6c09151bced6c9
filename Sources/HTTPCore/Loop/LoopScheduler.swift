/// The event loop's scheduling rules as a plain value: the jobs waiting for the
/// loop thread, the work to run when the current turn ends, whether the loop is
/// parked in `epoll_wait`, and how many turns it has run. No locks, no syscalls:
/// each method returns what the caller (the loop's `LoopJobQueue`, holding its lock)
/// must do afterwards, so tests drive it turn by turn.
///
/// A turn: `beginTurn` hands over the jobs queued so far, the loop runs them, and
/// `nextPass` hands over the jobs those queued, for another pass of the same turn, up
/// to `passes` passes (a Redis command wakes its connection's writer, a Redis reply
/// resumes its caller, a task hops back from an actor: each such hand-over runs in the
/// turn it was made in, not one turn later, after another turn's fan-out writes: a
/// publish on Redis went through three turns, each with a fan-out, before its reply
/// left; issue 24). Jobs queued by the last pass wait for the next turn, after a poll,
/// so descriptors are never starved by jobs. Then `endTurn` hands over the turn-end work queued until then
/// (before the turn or by its jobs), and counts the turn; then `park` decides how
/// long `epoll_wait` may sleep, and `unpark` follows it. Turn-end work queued during
/// turn t therefore runs at the end of turn t, after all of that turn's jobs: a
/// publish in turn t readies its subscribers, and the publisher's reply went out in
/// the same job (a publish on the loop reaches its hub in place and the reply is
/// written before the task suspends), as did the replies of every other request the
/// turn read; only then does the loop write the subscribers, each once with whatever
/// the turn published to it (as the bare C server writes publish replies, then its
/// subscribers, each turn). Publishers are not held up by the fan-out of their own
/// turn, and no delivery waits for the next turn's requests (issue 27: with 2,000
/// topics that wait was most of a delivery's latency). Work queued by the turn-end
/// work itself runs at the end of the next turn.
///
/// A turn with turn-end work polls once more before it, without waiting
/// (`hasTurnEndWork`, then `beginRound`): what became ready while its jobs ran (the
/// reply to a Redis command they sent, a request) runs in a new round of up to
/// `passes` passes, before the fan-out writes rather than after them (issue 24: a
/// publish on Redis was answered a fan-out later than in memory). Once per turn, so a
/// turn polls at most twice and runs at most `2 × passes` passes.
///
/// Wake-up rule: work added while the loop is parked returns `.wakeLoop` exactly
/// once (the first addition unparks it); work added while it is awake returns
/// `.none`, because the loop looks at its queues again before it sleeps.
struct LoopScheduler<Job, TurnEndWork> {
    /// What an addition requires of the caller once the lock is released.
    enum Wake: Equatable {
        case none
        /// Write the loop's eventfd: it sleeps in `epoll_wait`.
        case wakeLoop
    }

    /// How long the loop may block in `epoll_wait`.
    enum PollTimeout: Equatable {
        /// Work is waiting: poll without blocking.
        case immediate
        /// Nothing waits: sleep until readiness, a wake-up or the tick.
        case tick
    }

    private(set) var jobs: [Job] = []
    /// Turn-end work queued since the current turn began (for this turn's end).
    private(set) var arriving: [TurnEndWork] = []
    /// Turn-end work for the end of the current turn.
    private(set) var due: [TurnEndWork] = []
    /// The loop sleeps in `epoll_wait` (`park` said `.tick` and no `unpark` since).
    private(set) var isParked = false
    /// Turns completed (`endTurn` calls).
    private(set) var turn: UInt64 = 0
    /// Passes over the job queue a turn may make (at least 1).
    let passes: Int
    /// Passes made in the current turn.
    private var pass = 0

    /// `passes`: how many times a turn runs the jobs queued so far (see the type's doc).
    init(passes: Int = 4) {
        precondition(passes >= 1, "a turn runs its jobs at least once")
        self.passes = passes
    }

    /// Queues a job for the loop thread.
    mutating func enqueue(_ job: Job) -> Wake {
        jobs.append(job)
        return unparkForWork()
    }

    /// Queues work for the end of the current turn (while the loop runs its jobs),
    /// else of the next one.
    mutating func atTurnEnd(_ work: TurnEndWork) -> Wake {
        arriving.append(work)
        return unparkForWork()
    }

    /// Queues several works for the end of the current or next turn, as `atTurnEnd`,
    /// as one addition: at most one wake-up for all of them (another loop
    /// hands over what its turn readied here this way, `LoopOutboxes`).
    mutating func atTurnEnd(contentsOf works: [TurnEndWork]) -> Wake {
        guard !works.isEmpty else { return .none }
        arriving.append(contentsOf: works)
        return unparkForWork()
    }

    /// Starts a turn: the jobs to run now, swapped into `batch` (which must be
    /// empty); the turn-end work queued so far becomes this turn's.
    mutating func beginTurn(into batch: inout [Job]) {
        precondition(batch.isEmpty, "the previous turn's batch was not cleared")
        swap(&batch, &jobs)
        pass = 1
        if due.isEmpty {
            swap(&due, &arriving)
        } else {
            due.append(contentsOf: arriving)
            arriving.removeAll(keepingCapacity: true)
        }
    }

    /// After a pass of the turn's jobs: the jobs they queued, swapped into `batch`
    /// (which must be empty), for one more pass of this turn; false when none wait or
    /// the turn made its `passes` passes (the rest wait for the next turn).
    mutating func nextPass(into batch: inout [Job]) -> Bool {
        precondition(batch.isEmpty, "the previous pass's batch was not cleared")
        guard !jobs.isEmpty, pass < passes else { return false }
        swap(&batch, &jobs)
        pass += 1
        return true
    }

    /// Whether the turn has end work to run (queued before it or by its jobs): then the
    /// loop polls once more, without waiting, before running it.
    var hasTurnEndWork: Bool { !due.isEmpty || !arriving.isEmpty }

    /// After that poll: the jobs queued since the last pass (those it readied), swapped
    /// into `batch` (which must be empty), for a new round of up to `passes` passes of
    /// this turn; false when none wait.
    mutating func beginRound(into batch: inout [Job]) -> Bool {
        precondition(batch.isEmpty, "the previous pass's batch was not cleared")
        guard !jobs.isEmpty else { return false }
        swap(&batch, &jobs)
        pass = 1
        return true
    }

    /// Ends a turn: its turn-end work (queued before the turn or by its jobs),
    /// swapped into `work` (which must be empty).
    mutating func endTurn(into work: inout [TurnEndWork]) {
        precondition(work.isEmpty, "the previous turn's work was not cleared")
        due.append(contentsOf: arriving)
        arriving.removeAll(keepingCapacity: true)
        swap(&work, &due)
        turn &+= 1
    }

    /// Before `epoll_wait`: blocks only when nothing waits; then the loop counts as
    /// parked and the next addition must wake it.
    mutating func park() -> PollTimeout {
        guard jobs.isEmpty && arriving.isEmpty && due.isEmpty else { return .immediate }
        isParked = true
        return .tick
    }

    /// Back from `epoll_wait`: additions from now on need no wake-up.
    mutating func unpark() {
        isParked = false
    }

    private mutating func unparkForWork() -> Wake {
        guard isParked else { return .none }
        isParked = false
        return .wakeLoop
    }
}
