// What `DeliveryMetrics.recordWrite` costs, in ns per call (bench/histograms.md).
// Built by bench/histograms.sh with swiftc -O from the gateway's own files
// (Sources/SSEGateway/Metrics/{AtomicHistogram,HistogramSnapshot,DeliveryMetrics}.swift);
// Channel comes from StreamHub's Sources/StreamHub/Model/Channel.swift, built as its own module
// as in the package.
//
// Modes, each run `rounds` times (the table takes the best and the median):
// - one thread, value writes (latencies cycling through 64 waits spread from 50 µs to 12 s,
//   so the bucket search walks every distance), then heartbeat-only writes;
// - two threads at once on the same channel (the same cache lines: the worst sharing);
// - two threads at once on different channels (separate histograms).
// ns/call is a thread's loop time / its calls (for two threads, the slower thread's), in wall
// time and in the thread's own CPU time (CLOCK_THREAD_CPUTIME_ID: without descheduled time).

import Dispatch
import Glibc
import StreamHub
import Synchronization

@inline(never)
func loop(_ metrics: DeliveryMetrics, channel: Channel, calls: Int, waits: [Duration], values: Bool) {
    for i in 0..<calls {
        if values {
            let frames = 1 + (i & 7)
            metrics.recordWrite(channel: channel, frames: frames, events: frames, oldestWaited: waits[i & 63])
        } else {
            metrics.recordWrite(channel: channel, frames: 1, events: 0, oldestWaited: nil)
        }
    }
}

/// CPU time of the calling thread: unlike wall time, it leaves out the time the
/// thread was descheduled (the machine is shared).
func threadCPUTime() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
}

/// Runs `loop` on `threads` threads at once (one per channel in `channels`); ns per
/// call of the slowest thread, in wall time and in its own CPU time.
func measure(threads channels: [Channel], calls: Int, waits: [Duration], values: Bool) -> (wall: Double, cpu: Double) {
    let metrics = DeliveryMetrics()
    let ready = Atomic<Int>(0)
    let elapsed = Mutex<[(wall: Double, cpu: Double)]>([])
    let clock = ContinuousClock()
    DispatchQueue.concurrentPerform(iterations: channels.count) { index in
        // Start together: each thread spins until all have arrived.
        ready.add(1, ordering: .acquiringAndReleasing)
        while ready.load(ordering: .acquiring) < channels.count {}
        let start = clock.now, startCPU = threadCPUTime()
        loop(metrics, channel: channels[index], calls: calls, waits: waits, values: values)
        let cpu = threadCPUTime() - startCPU
        let (seconds, attoseconds) = (clock.now - start).components
        let wall = Double(seconds) * 1e9 + Double(attoseconds) * 1e-9
        elapsed.withLock { $0.append((wall / Double(calls), cpu / Double(calls))) }
    }
    let expected = UInt64(calls * channels.filter { $0 == channels[0] }.count)
    precondition(metrics.framesPerWrite(channels[0]).count == expected, "lost updates")
    return elapsed.withLock { times in (times.map(\.wall).max()!, times.map(\.cpu).max()!) }
}

let arguments = CommandLine.arguments
let quick = arguments.contains("--quick")
let calls = quick ? 1_000_000 : 20_000_000
let rounds = quick ? 2 : 7
// 64 waits, log-spaced from 50 µs to 12 s: every bucket, +Inf included.
let waits: [Duration] = (0..<64).map { i in
    .nanoseconds(Int64(50_000.0 * exp2(Double(i) / 63.0 * log2(12 / 50e-6))))
}

let modes: [(name: String, channels: [Channel], values: Bool)] = [
    ("1 thread, value writes (latency + frames)", [.events], true),
    ("1 thread, heartbeat writes (frames only)", [.events], false),
    ("2 threads, same channel, value writes", [.events, .events], true),
    ("2 threads, different channels, value writes", [.events, .state], true),
]
print("calls per thread: \(calls), rounds: \(rounds)")
print("| mode | wall ns/call, best | median | CPU ns/call, best | median |")
print("|---|---:|---:|---:|---:|")
func format(_ value: Double) -> String {
    let tenths = Int((value * 10).rounded())
    return "\(tenths / 10).\(tenths % 10)"
}
for mode in modes {
    let figures = (0..<rounds).map { _ in
        measure(threads: mode.channels, calls: calls, waits: waits, values: mode.values)
    }
    let wall = figures.map(\.wall).sorted(), cpu = figures.map(\.cpu).sorted()
    print("| \(mode.name) | \(format(wall[0])) | \(format(wall[rounds / 2])) | \(format(cpu[0])) | \(format(cpu[rounds / 2])) |")
}
