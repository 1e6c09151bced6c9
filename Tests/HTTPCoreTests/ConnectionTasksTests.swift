import Synchronization
import Testing
@testable import HTTPCore

/// The server's connection tasks: unstructured, tracked, cancelled together.
struct ConnectionTasksTests {
    /// `waitUntilNoneRun` returns at once with no task, and after the last of many tasks (some ending at once) has ended.
    @Test func waitReturnsWhenTheLastTaskEnds() async throws {
        let tasks = ConnectionTasks()
        await tasks.waitUntilNoneRun()
        let ended = Atomic<Int>(0)
        for index in 0..<1_000 {
            tasks.start {
                if index.isMultiple(of: 2) { try? await Task.sleep(for: .milliseconds(20)) }
                ended.add(1, ordering: .relaxed)
            }
        }
        await tasks.waitUntilNoneRun()
        let count = ended.load(ordering: .relaxed)
        #expect(count == 1_000)
    }

    /// `cancelAll` cancels every running task, and a task started afterwards starts cancelled.
    @Test func cancelAllReachesRunningAndLaterTasks() async throws {
        let tasks = ConnectionTasks()
        let cancelled = Atomic<Int>(0)
        let parked = Atomic<Int>(0)
        for _ in 0..<100 {
            tasks.start {
                parked.add(1, ordering: .relaxed)
                // Parked until cancelled (bounded, so a failure cannot hang the run).
                if (try? await Task.sleep(for: .seconds(30))) == nil { cancelled.add(1, ordering: .relaxed) }
            }
        }
        let deadline = ContinuousClock.now + .seconds(10)
        while parked.load(ordering: .relaxed) < 100 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        tasks.cancelAll()
        let late = Atomic<Bool>(false)
        tasks.start { late.store(Task.isCancelled, ordering: .relaxed) }
        await tasks.waitUntilNoneRun()
        let lateWasCancelled = late.load(ordering: .relaxed)
        #expect(cancelled.load(ordering: .relaxed) == 100)
        #expect(lateWasCancelled)
    }
}
