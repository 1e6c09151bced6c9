import Testing
@testable import SSELoad

/// The log-linear latency histogram.
struct HistogramTests {
    /// Every value from 1 ns to 137 s lands in a bucket whose top is within 1/128 above it.
    @Test func bucketsKeepOnePercentPrecision() {
        var value: UInt64 = 1
        while value < 137_000_000_000 {
            let bucket = LatencyHistogram.bucket(of: value)
            let top = LatencyHistogram.upperBound(ofBucket: bucket)
            #expect(top >= value)
            #expect(Double(top - value) <= Double(value) / 128)
            #expect(bucket < LatencyHistogram.bucketCount)
            value = value * 21 / 20 + 1
        }
        #expect(LatencyHistogram.bucket(of: .max) == LatencyHistogram.bucketCount - 1)
    }

    /// Percentiles of 1…10,000 µs come out within 1 % and the maximum is exact.
    @Test func percentilesOfAUniformSpread() throws {
        var histogram = LatencyHistogram()
        for micros in 1...10_000 as ClosedRange<UInt64> { histogram.record(micros * 1_000) }
        for (percentile, expected) in [(50.0, 5_000_000.0), (90, 9_000_000), (99, 9_900_000), (99.9, 9_990_000)] {
            let value = try #require(histogram.value(atPercentile: percentile))
            #expect(abs(Double(value) - expected) <= expected / 100, "p\(percentile) = \(value)")
        }
        #expect(histogram.max == 10_000_000)
        #expect(histogram.value(atPercentile: 100) == 10_000_000)
        #expect(histogram.count == 10_000)
    }

    /// Merging two histograms is the same as recording everything in one; an empty one has no percentiles.
    @Test func mergeAddsUp() {
        var a = LatencyHistogram(), b = LatencyHistogram(), both = LatencyHistogram()
        for value in [3, 900, 50_000, 7_000_000] as [UInt64] { a.record(value); both.record(value) }
        for value in [12, 1_000_000_000_000] as [UInt64] { b.record(value); both.record(value) }
        a.merge(b)
        #expect(a == both)
        #expect(LatencyHistogram().value(atPercentile: 50) == nil)
    }
}
