import StreamHub
import Testing
@testable import SSEGateway

/// `AtomicHistogram` and `DeliveryMetrics`: which bucket a value lands in, counts and
/// sums, one histogram per channel, and no update lost between threads.
struct DeliveryMetricsTests {
    /// A value exactly on a bound counts in that bound's bucket (`le`); one above it in the next; above all in `+Inf`.
    @Test(arguments: [
        (UInt64(0), 0), (1, 0), (10, 0), (11, 1), (20, 1), (21, 2), (30, 2), (31, 3), (UInt64.max, 3),
    ])
    func valuesLandInTheirLeBucket(value: UInt64, bucket: Int) {
        let histogram = AtomicHistogram(bounds: [10, 20, 30], unitsPerExposed: 1)
        histogram.record(value)
        var expected: [UInt64] = [0, 0, 0, 0]
        expected[bucket] = 1
        #expect(histogram.snapshot().counts == expected)
    }

    /// `count` observations of one value add `count` to its bucket and `count × value` to the sum.
    @Test func countAndSum() {
        let histogram = AtomicHistogram(bounds: [10, 20], unitsPerExposed: 1)
        histogram.record(5, count: 3)
        histogram.record(25)
        histogram.record(7, count: 0)
        let snapshot = histogram.snapshot()
        #expect(snapshot == HistogramSnapshot(bounds: [10, 20], counts: [3, 0, 1], sum: 40))
        #expect(snapshot.count == 4)
        #expect(snapshot.cumulativeCounts == [3, 3, 4])
    }

    /// The latency buckets are 100 µs to 10 s, exposed in seconds exactly as written in decimal.
    @Test func latencyBoundsInSeconds() {
        let bounds = DeliveryMetrics().latency(.state).bounds
        #expect(bounds == [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                           0.1, 0.25, 0.5, 1, 2.5, 5, 10])
        #expect(bounds.map(\.prometheusText) == ["0.0001", "0.00025", "0.0005", "0.001", "0.0025", "0.005", "0.01",
                                                 "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10"])
        #expect(DeliveryMetrics().framesPerWrite(.events).bounds == [1, 2, 4, 8, 16, 32, 64, 128, 256])
    }

    /// A wait of exactly 100 µs is in the first latency bucket, 1 ns more in the second; 10 s in the last finite one, past it `+Inf`.
    @Test(arguments: [
        (Duration.microseconds(100), 0), (.nanoseconds(100_001), 1), (.zero, 0), (.microseconds(-5), 0),
        (.milliseconds(1), 3), (.seconds(10), 15), (.seconds(10) + .nanoseconds(1), 16), (.seconds(3600), 16),
    ])
    func latencyBucketBoundaries(waited: Duration, bucket: Int) {
        let metrics = DeliveryMetrics()
        metrics.recordWrite(channel: .events, frames: 1, events: 1, oldestWaited: waited)
        #expect(metrics.latency(.events).counts.firstIndex(of: 1) == bucket)
        #expect(metrics.latency(.events).count == 1)
    }

    /// A write of several values observes each at the oldest one's wait; frames per write is one observation.
    @Test func aBatchIsObservedOncePerValue() {
        let metrics = DeliveryMetrics()
        metrics.recordWrite(channel: .events, frames: 3, events: 2, oldestWaited: .microseconds(1500))
        let latency = metrics.latency(.events)
        #expect(latency.count == 2)
        #expect(latency.counts[4] == 2)  // (0.001, 0.0025]
        #expect(abs(latency.sum - 0.003) < 1e-12)
        let frames = metrics.framesPerWrite(.events)
        #expect(frames.count == 1 && frames.sum == 3)
        #expect(frames.counts[2] == 1)  // (2, 4]
    }

    /// A heartbeat-only write counts in frames per write and not in latency; a write of nothing records nothing.
    @Test func heartbeatsAndEmptyWrites() {
        let metrics = DeliveryMetrics()
        metrics.recordWrite(channel: .state, frames: 1, events: 0, oldestWaited: nil)
        metrics.recordWrite(channel: .state, frames: 0, events: 0, oldestWaited: nil)
        #expect(metrics.framesPerWrite(.state).count == 1)
        #expect(metrics.latency(.state).count == 0 && metrics.latency(.state).sum == 0)
    }

    /// Each channel has its own histograms.
    @Test func channelsAreSeparate() {
        let metrics = DeliveryMetrics()
        metrics.recordWrite(channel: .state, frames: 300, events: 300, oldestWaited: .milliseconds(30))
        #expect(metrics.latency(.state).count == 300)
        #expect(metrics.framesPerWrite(.state).counts.last == 1)  // 300 frames: above 256
        #expect(metrics.latency(.events).count == 0)
        #expect(metrics.framesPerWrite(.events).count == 0)
    }

    /// Durations become whole nanoseconds; negative ones 0, ones past 2^64 ns saturate.
    @Test func nanosecondsOfADuration() {
        #expect(DeliveryMetrics.nanoseconds(.seconds(1)) == 1_000_000_000)
        #expect(DeliveryMetrics.nanoseconds(.nanoseconds(1234)) == 1234)
        #expect(DeliveryMetrics.nanoseconds(.seconds(-1)) == 0)
        #expect(DeliveryMetrics.nanoseconds(.nanoseconds(-1)) == 0)
        #expect(DeliveryMetrics.nanoseconds(.seconds(Int64.max)) == .max)
    }

    /// Records from several threads at once are all counted, in buckets and in the sum.
    @Test func concurrentRecordsAreAllCounted() async {
        let metrics = DeliveryMetrics()
        let perTask = 20_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for i in 0..<perTask {
                        metrics.recordWrite(channel: .events, frames: 2, events: 1,
                                            oldestWaited: .microseconds(i % 2 == 0 ? 50 : 400))
                    }
                }
            }
        }
        let latency = metrics.latency(.events)
        #expect(latency.count == UInt64(4 * perTask))
        #expect(latency.counts[0] == UInt64(2 * perTask) && latency.counts[2] == UInt64(2 * perTask))
        #expect(abs(latency.sum - Double(2 * perTask) * 450e-6) < 1e-9)
        #expect(metrics.framesPerWrite(.events).sum == Double(8 * perTask))
    }
}
