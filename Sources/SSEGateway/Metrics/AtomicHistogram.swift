import Synchronization

/// A histogram's counters, recorded from any thread without a lock and read at
/// scrape time as a `HistogramSnapshot`.
///
/// Promises: the bounds are fixed at `init` (inclusive upper bounds, strictly
/// ascending, in the recorder's integer unit, at most `capacity - 1` of them); an
/// observation lands in the first bucket whose bound is `>=` it (Prometheus's `le`),
/// or in the bucket above every bound (`+Inf`). `record` is two relaxed atomic adds
/// (its bucket, the sum) and never waits. A snapshot taken while records run may
/// hold an observation in its bucket and not yet in the sum, or the reverse; its
/// count is the sum of its own buckets, so `_count` always equals the `+Inf` bucket.
/// Counters wrap at 2^64 (a sum in nanoseconds: 584 years of waiting).
final class AtomicHistogram: Sendable {
    /// Buckets a histogram can have, the `+Inf` one included.
    static let capacity = 24

    /// Inclusive upper bounds in the recorder's unit, ascending.
    let bounds: [UInt64]
    /// Recorder units per exposition unit (1e9 for nanoseconds shown as seconds).
    let unitsPerExposed: Double
    /// Sum of observed values, in the recorder's unit. Declared next to the
    /// counts, so what records write is one stretch of the object and the read-only
    /// fields around it keep other histograms' counters off its cache lines.
    private let sum = Atomic<UInt64>(0)
    /// Observations per bucket, not cumulative; index `bounds.count` is `+Inf`.
    /// Inline, so recording reaches a counter without touching an array buffer.
    private let counts: InlineArray<24, Atomic<UInt64>>
    /// The bounds again, inline and signed for the bucket search on the recording
    /// path; the slots past the last bound hold `Int64.max`.
    private let inlineBounds: InlineArray<23, Int64>

    init(bounds: [UInt64], unitsPerExposed: Double) {
        precondition(bounds.count < Self.capacity, "at most \(Self.capacity - 1) bounds")
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend strictly")
        precondition(bounds.allSatisfy { $0 < UInt64(Int64.max) }, "bounds must be below 2^63")
        self.bounds = bounds
        self.unitsPerExposed = unitsPerExposed
        counts = InlineArray { _ in Atomic<UInt64>(0) }
        inlineBounds = InlineArray { $0 < bounds.count ? Int64(bounds[$0]) : Int64.max }
    }

    /// Records `count` observations of `value` (one add to its bucket, one to the sum).
    func record(_ value: UInt64, count: UInt64 = 1) {
        guard count > 0 else { return }
        // The bucket is the number of bounds below the value, counted over every slot
        // without a branch (a search's branches mispredict when values vary):
        // `bound - value` is negative exactly when the bound is below the value, and
        // its sign shifted down is then -1. Unused slots hold Int64.max, never below.
        let signed = Int64(min(value, UInt64(Int64.max)))
        var index = 0
        for slot in 0..<Self.capacity - 1 {
            index &-= Int((inlineBounds[slot] &- signed) >> 63)
        }
        counts[index].wrappingAdd(count, ordering: .relaxed)
        let (total, overflow) = value.multipliedReportingOverflow(by: count)
        sum.wrappingAdd(overflow ? UInt64.max : total, ordering: .relaxed)
    }

    /// The counters now, bounds and sum in exposition units.
    func snapshot() -> HistogramSnapshot {
        HistogramSnapshot(
            bounds: bounds.map { Double($0) / unitsPerExposed },
            counts: (0...bounds.count).map { counts[$0].load(ordering: .relaxed) },
            sum: Double(sum.load(ordering: .relaxed)) / unitsPerExposed)
    }
}
