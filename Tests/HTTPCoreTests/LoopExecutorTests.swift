import Synchronization
import Testing
@testable import HTTPCore

/// The event loop as an executor: tasks that prefer it and actors on its
/// `actorExecutor` run on the loop thread, one job at a time, and a job queued
/// while the loop sleeps in `epoll_wait` wakes it.
struct LoopExecutorTests {
    /// A counter isolated to the loop thread.
    actor LoopCounter {
        let executor: LoopActorExecutor
        var count = 0
        var offThread = 0

        init(executor: LoopActorExecutor) { self.executor = executor }

        nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

        func bump(loop: EventLoop) {
            if !loop.isLoopThread { offThread += 1 }
            count += 1
        }
    }

    /// A task preferring the loop runs on its thread, and is back on it after a
    /// sleep whose timer fires on another thread.
    @Test func preferringTaskRunsOnTheLoopThread() async {
        let loop = EventLoop.shared
        let (before, after) = await withTaskExecutorPreference(loop) { () async -> (Bool, Bool) in
            let before = loop.isLoopThread
            try? await Task.sleep(for: .milliseconds(5))
            return (before, loop.isLoopThread)
        }
        #expect(before && after)
        #expect(!loop.isLoopThread)  // the test itself runs on the pool
    }

    /// 1,000 calls from pool tasks at once into an actor on the loop's executor:
    /// all run on the loop thread, none lost (they ran one at a time).
    @Test func actorOnTheLoopIsSerialised() async {
        let loop = EventLoop.shared
        let counter = LoopCounter(executor: loop.actorExecutor)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1_000 {
                group.addTask { await counter.bump(loop: loop) }
            }
        }
        #expect(await counter.count == 1_000)
        #expect(await counter.offThread == 0)
    }

    /// Jobs queued while the loop sleeps wake it. Were the wake-up lost, every hop
    /// would wait for the loop's 100 ms tick; here most take well under that (the
    /// test asks a tenth of them, as the whole suite loads the loop beside it).
    @Test func queuedJobWakesASleepingLoop() async {
        let loop = EventLoop.shared
        let counter = LoopCounter(executor: loop.actorExecutor)
        var fast = 0
        for _ in 0..<300 {
            // Let the loop go back to sleep before the next hop.
            try? await Task.sleep(for: .milliseconds(1))
            let start = ContinuousClock.now
            await counter.bump(loop: loop)
            if ContinuousClock.now - start < .milliseconds(50) { fast += 1 }
        }
        #expect(await counter.count == 300)
        #expect(fast >= 30)
    }

    /// `afterQueuedWork` resumes after a few turns, also when the loop was asleep
    /// and nothing else happens (from a task on the pool and from one preferring the
    /// loop, which comes back on the loop thread): were the wake-up lost, every call
    /// would wait for the loop's 100 ms tick.
    @Test func afterQueuedWorkResumesOnAnIdleLoop() async {
        let loop = EventLoop.shared
        var onLoop = 0
        var fast = 0
        for index in 0..<300 {
            try? await Task.sleep(for: .milliseconds(1))
            let start = ContinuousClock.now
            if index.isMultiple(of: 2) {
                await loop.afterQueuedWork()
            } else {
                await withTaskExecutorPreference(loop) {
                    await loop.afterQueuedWork()
                    if loop.isLoopThread { onLoop += 1 }
                }
            }
            if ContinuousClock.now - start < .milliseconds(50) { fast += 1 }
        }
        #expect(onLoop == 150)
        #expect(fast >= 30)
    }
}
