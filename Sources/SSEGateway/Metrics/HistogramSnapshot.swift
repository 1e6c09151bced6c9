/// One reading of a histogram, in the units its exposition shows (seconds, frames):
/// what `PrometheusText.histogram` writes as `_bucket`, `_sum` and `_count`.
///
/// Promises (checked at `init`, a violation is a programmer error and traps): the
/// bounds are finite and strictly ascending, and there is one count per bound plus
/// one for the values above them all (`+Inf`).
struct HistogramSnapshot: Sendable, Equatable {
    /// Inclusive upper bounds (`le`), finite, strictly ascending.
    let bounds: [Double]
    /// Observations per bucket, not cumulative: `counts[i]` holds the values in
    /// `(bounds[i-1], bounds[i]]`, the last the values above every bound.
    let counts: [UInt64]
    /// The sum of the observed values.
    let sum: Double

    init(bounds: [Double], counts: [UInt64], sum: Double) {
        precondition(counts.count == bounds.count + 1, "one count per bound, and one for +Inf")
        precondition(bounds.allSatisfy(\.isFinite), "bounds must be finite (+Inf is implicit)")
        precondition(zip(bounds, bounds.dropFirst()).allSatisfy { $0 < $1 }, "bounds must ascend strictly")
        self.bounds = bounds
        self.counts = counts
        self.sum = sum
    }

    /// Every observation: the `+Inf` bucket's cumulative count.
    var count: UInt64 { counts.reduce(0, &+) }

    /// Observations at or below each bound, then the total (the `_bucket` samples' values).
    var cumulativeCounts: [UInt64] {
        var running: UInt64 = 0
        return counts.map { running &+= $0; return running }
    }
}
