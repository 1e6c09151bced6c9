import Locking
import Synchronization
import TestSupport
import Testing
@testable import HTTPCore

/// The server's connection tasks: children of sharded task groups, waited for and cancelled with the serving task.
struct ConnectionGroupsTests {
    /// `serve` returns only after the last of many jobs (some ending at once, some later) has ended, and every job ran once.
    @Test func serveReturnsWhenTheLastJobEnds() async throws {
        let groups = ConnectionGroups(shards: 4)
        let ended = Atomic<Int>(0)
        // Half the jobs end only when the gate opens, after the serving body has returned.
        let gate = Gate()
        await groups.serve {
            for index in 0..<1_000 {
                groups.start {
                    if index.isMultiple(of: 2) { await gate.wait() }
                    ended.add(1, ordering: .relaxed)
                }
                if index.isMultiple(of: 100) { await Task.yield() }
            }
            Task { gate.open() }
        }
        let count = ended.load(ordering: .relaxed)
        #expect(count == 1_000)
    }

    /// Cancelling the serving task cancels every running job, and a job started afterwards still runs, cancelled.
    @Test func cancellationReachesRunningAndLaterJobs() async throws {
        let groups = ConnectionGroups(shards: 3)
        let cancelled = Atomic<Int>(0)
        let parked = Atomic<Int>(0)
        let late = Atomic<Int>(0)  // 0 not run, 1 ran cancelled, 2 ran not cancelled
        let serving = Task {
            await groups.serve {
                for _ in 0..<100 {
                    groups.start {
                        parked.add(1, ordering: .relaxed)
                        // Parked until cancelled: a wait for the cancellation, which ends the
                        // sleep at once; its 30 s only bound a failure.
                        if (try? await Task.sleep(for: .seconds(30))) == nil { cancelled.add(1, ordering: .relaxed) }
                    }
                }
                // Like the accept loop: runs until cancelled (woken by it, as above), then starts one more.
                try? await Task.sleep(for: .seconds(30))
                groups.start { late.store(Task.isCancelled ? 1 : 2, ordering: .relaxed) }
            }
        }
        #expect(await eventually(upTo: 10) { parked.load(ordering: .relaxed) == 100 })
        serving.cancel()
        await serving.value
        #expect(cancelled.load(ordering: .relaxed) == 100)
        #expect(late.load(ordering: .relaxed) == 1)
    }
}

/// A gate many tasks wait at until it opens; they are resumed after the lock is released.
private final class Gate: Sendable {
    private let state = Locked<(isOpen: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func wait() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state in
                if !state.isOpen { state.waiters.append(continuation) }
                return state.isOpen
            }
            if now { continuation.resume() }
        }
    }

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }
}
