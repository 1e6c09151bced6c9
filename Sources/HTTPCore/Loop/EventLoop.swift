import CStreamsSSL
import Foundation
import Glibc
import Locking
import Synchronization

/// The readiness engine: one dedicated thread blocked in `epoll_wait`, woken
/// through an eventfd. Descriptors are registered once, edge-triggered, for
/// read, write and hang-up; tasks suspend in `wait` and are resumed by the
/// loop thread. The loop is also an executor (`EventLoop+Executor`): tasks
/// that prefer it run on its thread, so nothing that can block may run in
/// them — one blocking call would stall every connection, not one pool
/// thread. Sockets are non-blocking and only their readiness waits here.
///
/// Deadlines are checked every 100 ms, which is the resolution of every
/// timeout built on them.
public final class EventLoop: Sendable {
    /// The process's loop, started on first use.
    public static let shared: EventLoop = start(index: 0)

    /// The loops started so far, `shared` first. Loop threads live as long as the
    /// process, so every server asking for n loops shares the first n.
    private static let running = Locked<[EventLoop]>([])

    /// The process's first `count` loops (`shared` is the first), starting the
    /// ones not running yet. Servers spread connections over them, and a gateway
    /// its topics (`--loops`).
    public static func loops(_ count: Int) -> [EventLoop] {
        precondition(count >= 1, "at least one event loop")
        _ = shared
        return running.withLock { loops in
            while loops.count < count { loops.append(start(index: loops.count)) }
            return Array(loops.prefix(count))
        }
    }

    private static func start(index: Int) -> EventLoop {
        do {
            let loop = try EventLoop(index: index)
            if index == 0 { running.withLock { $0.insert(loop, at: 0) } }
            return loop
        } catch {
            // Without epoll or an eventfd the process can do nothing useful.
            fatalError("cannot start event loop \(index): \(error)")
        }
    }

    /// The number of cores this process may run on (its CPU affinity), at least 1:
    /// the default number of loops.
    public static var availableCores: Int { max(1, Int(cstreams_affinity_cpu_count())) }

    /// The loop's place among the process's loops (0 for `shared`).
    public let index: Int

    private static let wakeToken = UInt64.max
    private static let tickMilliseconds: Int32 = 100

    private let epollFD: Int32
    private let wakeFD: Int32
    private let state = Locked(LoopState())
    private let nextWaiterID = Atomic<UInt64>(1)
    /// Jobs for the loop thread (`EventLoop+Executor`).
    let jobQueue: LoopJobQueue
    /// The loop thread as an actor's serial executor (`EventLoop+Executor`).
    public let actorExecutor: LoopActorExecutor
    /// Where reads on the loop's thread land (`Connection.readAvailable`): 64 KiB, the
    /// largest read anything here asks for (a Redis connection's reader; the server's
    /// request loop asks for 4 KiB, HTTP/2 for 16).
    let readBuffer = LoopReadBuffer(count: 64 * 1024)

    init(index: Int) throws(SystemError) {
        self.index = index
        epollFD = try Syscall.epollCreate()
        wakeFD = try Syscall.eventFD()
        let wakeFD = wakeFD
        jobQueue = LoopJobQueue(wake: { Syscall.signalEventFD(wakeFD) })
        actorExecutor = LoopActorExecutor(queue: jobQueue)
        try Syscall.epollControl(epollFD, EPOLL_CTL_ADD, wakeFD, events: EPOLLIN.rawValue, data: Self.wakeToken)
        let thread = Thread { [self] in run() }
        thread.name = index == 0 ? "streams-event-loop" : "streams-event-loop-\(index)"
        thread.start()
    }

    /// Starts watching `fd` for readiness and hang-up. The caller closes the
    /// descriptor only after `deregister`.
    public func register(_ fd: Int32) throws(SystemError) -> LoopRegistration {
        let registration = state.withLock { $0.register(fd) }
        let events = EPOLLIN.rawValue | EPOLLOUT.rawValue | EPOLLRDHUP.rawValue | EPOLLET.rawValue
        do {
            try Syscall.epollControl(epollFD, EPOLL_CTL_ADD, fd, events: events, data: registration.token)
        } catch {
            var actions = LoopActions()
            state.withLock { $0.deregister(registration, into: &actions) }
            throw error
        }
        return registration
    }

    /// Batches of turn-end work other loops' threads handed to this one (tests).
    var crossLoopHandoffs: Int { jobQueue.handoffsReceived.load(ordering: .relaxed) }

    /// Descriptors registered on this loop now: how busy it is, for spreading
    /// connections over loops.
    public var registeredDescriptors: Int { state.withLock { $0.registeredCount } }

    /// Stops watching; pending waits end with `IOWaitError.closed`. Closing the
    /// descriptor afterwards removes it from the epoll set.
    public func deregister(_ registration: LoopRegistration) {
        var actions = LoopActions()
        state.withLock { $0.deregister(registration, into: &actions) }
        actions.run()
    }

    /// Marks the descriptor hung up as if the peer had gone: waits end, the
    /// hang-up handler runs. Used to abort a connection from another task.
    public func markHungUp(_ registration: LoopRegistration) {
        var actions = LoopActions()
        state.withLock { $0.apply(registration, readable: false, writable: false, hangUp: true, into: &actions) }
        actions.run()
    }

    /// Runs `handler` once when the peer hangs up (EOF, reset, error) or the
    /// descriptor is aborted — at once if that already happened.
    public func onHangUp(_ registration: LoopRegistration, _ handler: @escaping @Sendable () -> Void) {
        let runNow = state.withLock { state -> Bool in
            let index = Int(registration.fd)
            guard var slot = state.slot(registration) else { return false }
            if slot.hungUp { return true }
            slot.hangUpHandler = handler
            state.slots[index] = slot
            return false
        }
        if runNow { handler() }
    }

    /// Whether the peer hung up (sticky).
    public func isHungUp(_ registration: LoopRegistration) -> Bool {
        state.withLock { $0.slot(registration)?.hungUp ?? true }
    }

    /// Suspends until the descriptor is readable (`.read`) or writable
    /// (`.write`), the deadline passes (`IOWaitError.timedOut`), the
    /// descriptor is deregistered (`IOWaitError.closed`) or the task is
    /// cancelled (`CancellationError`). One waiter per role per descriptor;
    /// the role defaults to the one that normally waits for `interest` (the
    /// reader for `.read`), and TLS passes it explicitly when a read must
    /// wait for writability or a write for readability.
    ///
    /// With `cancelledByCaller`, the wait installs no cancellation handler of its own:
    /// the calling task has one that calls `cancelWaits(on:)` (see
    /// `Connection.withOneCancellationHandler`). Adding and removing a task's handler
    /// costs about 600 instructions and an executor switch a wait, that is a request.
    nonisolated(nonsending) func wait(for interest: Interest, as role: IORole? = nil, on registration: LoopRegistration,
              deadline: LoopDeadline?, cancelledByCaller: Bool = false) async throws {
        let role = role ?? IORole(natural: interest)
        let id = nextWaiterID.add(1, ordering: .relaxed).newValue
        if cancelledByCaller {
            // A cancellation before the park is seen by `park` (it checks under the lock
            // the handler takes); one after it finds the waiter in the slot.
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, Error>) in
                park(Waiter(id: id, interest: interest, continuation: continuation, deadline: deadline),
                     as: role, on: registration)
            }
            return
        }
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, Error>) in
                park(Waiter(id: id, interest: interest, continuation: continuation, deadline: deadline),
                     as: role, on: registration)
            }
        } onCancel: {
            let continuation = state.withLock { state -> UnsafeContinuation<Void, Error>? in
                let index = Int(registration.fd)
                guard var slot = state.slot(registration), slot[role]?.id == id else { return nil }
                let taken = slot[role].take()
                state.slots[index] = slot
                return taken?.continuation
            }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Resumes whatever waits on the descriptor (either role) with `CancellationError`:
    /// the cancellation handler of a task whose waits pass `cancelledByCaller`.
    func cancelWaits(on registration: LoopRegistration) {
        let continuations = state.withLock { state -> [UnsafeContinuation<Void, Error>] in
            let index = Int(registration.fd)
            guard var slot = state.slot(registration) else { return [] }
            let taken = IORole.both.compactMap { slot[$0].take()?.continuation }
            state.slots[index] = slot
            return taken
        }
        for continuation in continuations { continuation.resume(throwing: CancellationError()) }
    }

    /// Records `waiter` as `role`'s wait on the descriptor, or resumes it at once
    /// (an unconsumed edge, a closed descriptor, a cancelled task, a deadline passed).
    /// Not inlined into `wait`: the slot copies it makes stay on the thread's stack
    /// instead of becoming task allocations that a parked task keeps while it waits.
    @inline(never)
    private func park(_ waiter: Waiter, as role: IORole, on registration: LoopRegistration) {
        let immediate: Result<Void, Error>? = state.withLock { state in
            let index = Int(registration.fd)
            guard var slot = state.slot(registration) else { return .failure(IOWaitError.closed) }
            if Task.isCancelled { return .failure(CancellationError()) }
            if slot.consumeEdge(waiter.interest, for: role) {
                state.slots[index] = slot
                return .success(())
            }
            precondition(slot[role] == nil, "two tasks wait as the \(role) of one descriptor")
            if let deadline = waiter.deadline, deadline.hasPassed(at: .now) { return .failure(IOWaitError.timedOut) }
            slot[role] = waiter
            // Listed once while it has a deadline: not a hashed insert per wait.
            if waiter.deadline != nil && !slot.listedForDeadlines {
                slot.listedForDeadlines = true
                state.deadlineFDs.insert(registration.fd)
            }
            state.slots[index] = slot
            return nil
        }
        if let immediate { waiter.continuation.resume(with: immediate) }
    }

    private func run() {
        let capacity: Int32 = 1024
        // 12 KiB from malloc at start-up: failing it means the process is out of memory
        // before it serves anything, and a loop without its event array cannot run.
        guard let events = cstreams_epoll_events_allocate(capacity) else { fatalError("cannot allocate the epoll event array") }
        defer { cstreams_epoll_events_free(events) }
        jobQueue.loopThreadStarted()
        var nextDeadlineCheck = ContinuousClock.now
        var batch: [LoopJob] = []
        var turnEndWork: [any TurnEndWork] = []
        let taskExecutor = asUnownedTaskExecutor()
        let actorExecutor = actorExecutor.asUnownedSerialExecutor()
        while true {
            // Before the turn's end work (the fan-out writes): what became ready while
            // its jobs ran, taken without waiting (`LoopScheduler`).
            jobQueue.runTurn(jobs: &batch, work: &turnEndWork, task: taskExecutor, actor: actorExecutor) {
                guard let count = try? Syscall.epollWait(epollFD, events, capacity, timeoutMilliseconds: 0), count > 0
                else { return false }
                dispatch(events, count: count, checkingDeadlinesAt: nil)
                return true
            }
            let count: Int
            do {
                count = try Syscall.epollWait(epollFD, events, capacity, timeoutMilliseconds: jobQueue.pollTimeout(tick: Self.tickMilliseconds))
                jobQueue.loopIsAwake()
            } catch {
                jobQueue.loopIsAwake()
                // epoll_wait fails only on programmer errors (bad fd, bad pointer); log and keep going.
                FileHandle.standardError.write(Data("event loop: \(error)\n".utf8))
                continue
            }
            let now = ContinuousClock.now
            let checkDeadlines = now >= nextDeadlineCheck
            if checkDeadlines { nextDeadlineCheck = now.advanced(by: .milliseconds(Int(Self.tickMilliseconds))) }
            dispatch(events, count: count, checkingDeadlinesAt: checkDeadlines ? now : nil)
        }
    }

    /// Hands the polled events to their waiters (and, at `now`, expires the deadlines
    /// passed), then runs what that readied.
    private func dispatch(_ events: UnsafeMutablePointer<epoll_event>, count: Int,
                          checkingDeadlinesAt now: ContinuousClock.Instant?) {
        var actions = LoopActions()
        var sawWake = false
        state.withLock { state in
            for index in 0..<count {
                let data = cstreams_epoll_event_data(events, Int32(index))
                if data == Self.wakeToken { sawWake = true; continue }
                let flags = cstreams_epoll_event_events(events, Int32(index))
                let registration = LoopRegistration(fd: Int32(bitPattern: UInt32(truncatingIfNeeded: data)),
                                                    generation: UInt32(truncatingIfNeeded: data >> 32))
                let hangUp = flags & (EPOLLRDHUP.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
                state.apply(registration,
                            readable: flags & EPOLLIN.rawValue != 0,
                            writable: flags & EPOLLOUT.rawValue != 0,
                            hangUp: hangUp, into: &actions)
            }
            if let now, !state.deadlineFDs.isEmpty { state.expire(now: now, into: &actions) }
        }
        if sawWake { Syscall.drainEventFD(wakeFD) }
        actions.run()
        jobQueue.flushOutboxes()  // a hang-up handler may have readied another loop's stream
    }
}
