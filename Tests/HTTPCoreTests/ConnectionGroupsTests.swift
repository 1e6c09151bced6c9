import Synchronization
import Testing
@testable import HTTPCore

/// The server's connection tasks: children of sharded task groups, waited for and cancelled with the serving task.
struct ConnectionGroupsTests {
    /// `serve` returns only after the last of many jobs (some ending at once, some later) has ended, and every job ran once.
    @Test func serveReturnsWhenTheLastJobEnds() async throws {
        let groups = ConnectionGroups(shards: 4)
        let ended = Atomic<Int>(0)
        await groups.serve {
            for index in 0..<1_000 {
                groups.start {
                    if index.isMultiple(of: 2) { try? await Task.sleep(for: .milliseconds(20)) }
                    ended.add(1, ordering: .relaxed)
                }
                if index.isMultiple(of: 100) { await Task.yield() }
            }
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
                        // Parked until cancelled (bounded, so a failure cannot hang the run).
                        if (try? await Task.sleep(for: .seconds(30))) == nil { cancelled.add(1, ordering: .relaxed) }
                    }
                }
                // Like the accept loop: runs until cancelled, then starts one more.
                while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
                groups.start { late.store(Task.isCancelled ? 1 : 2, ordering: .relaxed) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while parked.load(ordering: .relaxed) < 100 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        serving.cancel()
        await serving.value
        #expect(cancelled.load(ordering: .relaxed) == 100)
        #expect(late.load(ordering: .relaxed) == 1)
    }
}
