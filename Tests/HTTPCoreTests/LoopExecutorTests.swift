import Glibc
import Locking
import TestSupport
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
            // The sleep is what is tested, not a wait: its timer fires on another thread.
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
            // Let the loop go back to sleep before the next hop. Not a wait for an
            // event: a parked loop shows nothing outside HTTPCore, and the shared loop
            // may not park at all while other suites run, hence the tenth below.
            try? await Task.sleep(for: .milliseconds(1))
            let start = ContinuousClock.now
            await counter.bump(loop: loop)
            if ContinuousClock.now - start < .milliseconds(50) { fast += 1 }
        }
        #expect(await counter.count == 300)
        #expect(fast >= 30)
    }

    /// Work queued for the end of the turn runs on the loop thread, after the jobs
    /// queued before it, also when the loop was asleep (the wake-up is not lost:
    /// it would otherwise wait for the 100 ms tick).
    @Test func turnEndWorkRunsOnTheLoopThread() async {
        final class Probe: TurnEndWork {
            let ran = Locked<[Bool]>([])
            let loop: EventLoop
            init(loop: EventLoop) { self.loop = loop }
            func runAtTurnEnd() { ran.withLock { $0.append(loop.isLoopThread) } }
        }
        let loop = EventLoop.shared
        let probe = Probe(loop: loop)
        for _ in 0..<50 {
            // A chance for the loop to park between additions (as above: not observable).
            try? await Task.sleep(for: .milliseconds(1))
            loop.atTurnEnd(probe)
        }
        #expect(await eventually(upTo: 10) { probe.ran.withLock { $0.count } >= 50 })
        #expect(probe.ran.withLock { $0 } == Array(repeating: true, count: 50))
    }

    /// Streams one loop readies on another (a publish reaching subscribers whose
    /// connections live there) cross over once per batch, not once per stream, and
    /// run on their own loop's thread.
    @Test func workReadiedForAnotherLoopCrossesOncePerBatch() async throws {
        final class Probe: TurnEndWork {
            let ran = Locked<[Bool]>([])
            let loop: EventLoop
            init(loop: EventLoop) { self.loop = loop }
            func runAtTurnEnd() { ran.withLock { $0.append(loop.isLoopThread) } }
        }
        // Loops of this test's own, so no other test's work crosses between them.
        let source = try EventLoop(index: 90)
        let target = try EventLoop(index: 91)
        let probes = (0..<100).map { _ in Probe(loop: target) }
        let before = target.crossLoopHandoffs
        await withTaskExecutorPreference(source) {
            #expect(source.isLoopThread)
            for probe in probes { target.atTurnEnd(probe) }
        }
        #expect(await eventually(upTo: 10) { probes.allSatisfy { !$0.ran.withLock { $0.isEmpty } } })
        #expect(probes.allSatisfy { $0.ran.withLock { $0 } == [true] })
        #expect(target.crossLoopHandoffs - before == 1)
    }

    /// A task that a job resumes (a Redis reply resuming its publisher, a command waking
    /// its connection's writer) runs in that same turn, before the turn's end work (the
    /// fan-out writes), not one turn later after them (issue 24: a publish on Redis used
    /// to wait out three turns' fan-outs).
    @Test func aTaskResumedByAJobRunsBeforeThatTurnsEndWork() async throws {
        final class Record: TurnEndWork {
            let order = Locked<[String]>([])
            let parked = Locked<UnsafeContinuation<Void, Never>?>(nil)
            func runAtTurnEnd() { order.withLock { $0.append("turn end") } }
        }
        let loop = try EventLoop(index: 92)
        let record = Record()
        let waiter = Task(executorPreference: loop) {
            await withUnsafeContinuation { continuation in record.parked.withLock { $0 = continuation } }
            record.order.withLock { $0.append("resumed") }
        }
        #expect(await eventually(upTo: 10) { record.parked.withLock { $0 != nil } })
        await withTaskExecutorPreference(loop) {
            // One job readies the turn's end work, then resumes the parked task.
            loop.atTurnEnd(record)
            record.parked.withLock { $0.take() }?.resume()
        }
        await waiter.value
        #expect(await eventually(upTo: 10) { record.order.withLock { $0.count } == 2 })
        #expect(record.order.withLock { $0 } == ["resumed", "turn end"])
    }

    /// A descriptor that becomes readable while a turn's jobs run (the Redis reply to a
    /// command a job wrote) is looked at before that turn's end work (the fan-out
    /// writes), without waiting, and its reader runs before them (issue 24: on one
    /// core, Redis answers while the gateway's jobs still run; the reply then waited out
    /// the fan-out).
    @Test func aDescriptorReadiedDuringATurnIsServedBeforeItsEndWork() async throws {
        final class Record: TurnEndWork {
            let order = Locked<[String]>([])
            func runAtTurnEnd() { order.withLock { $0.append("turn end") } }
        }
        let loop = try EventLoop(index: 93)
        let record = Record()
        var ends: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0, &ends) == 0)
        let reader = try Connection(adopting: ends[0], loop: loop, counters: nil)
        defer { Syscall.close(ends[1]) }
        let read = Task(executorPreference: loop) {
            let bytes = try await reader.read(maxBytes: 16)
            record.order.withLock { $0.append("read \(bytes.count)") }
        }
        // Let the reader find nothing and wait for readability.
        try await Task.sleep(for: .milliseconds(200))
        await withTaskExecutorPreference(loop) {
            // One job readies the turn's end work, then makes the reader's end readable.
            loop.atTurnEnd(record)
            #expect(write(ends[1], "ping", 4) == 4)
        }
        try await read.value
        #expect(await eventually(upTo: 10) { record.order.withLock { $0.count } == 2 })
        #expect(record.order.withLock { $0 } == ["read 4", "turn end"])
        reader.close()
    }
}
