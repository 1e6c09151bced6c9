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

    /// Jobs queued while the loop sleeps wake it: 300 hops there and back take far
    /// less than the 30 s they would if each waited for the loop's 100 ms tick.
    @Test func queuedJobWakesASleepingLoop() async {
        let loop = EventLoop.shared
        let counter = LoopCounter(executor: loop.actorExecutor)
        let start = ContinuousClock.now
        for _ in 0..<300 {
            await counter.bump(loop: loop)
            // Let the loop go back to sleep before the next hop.
            try? await Task.sleep(for: .milliseconds(1))
        }
        let elapsed = ContinuousClock.now - start
        #expect(await counter.count == 300)
        #expect(elapsed < .seconds(10))
    }

    /// `afterQueuedWork` resumes after a few turns, also when the loop was asleep
    /// and nothing else happens: 300 calls take far less than the 30 s they would
    /// if each waited for the loop's 100 ms tick.
    @Test func afterQueuedWorkResumesOnAnIdleLoop() async {
        let loop = EventLoop.shared
        let start = ContinuousClock.now
        var onLoop = 0
        for index in 0..<300 {
            if index.isMultiple(of: 2) {
                await loop.afterQueuedWork()
            } else {
                await withTaskExecutorPreference(loop) {
                    await loop.afterQueuedWork()
                    if loop.isLoopThread { onLoop += 1 }
                }
            }
            try? await Task.sleep(for: .milliseconds(1))
        }
        let elapsed = ContinuousClock.now - start
        #expect(onLoop == 150)
        #expect(elapsed < .seconds(10))
    }
}
