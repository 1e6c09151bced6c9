/// A log-linear histogram of nanosecond values in the manner of HdrHistogram:
/// exact below 128 ns, then 128 sub-buckets per power of two (so any value is
/// known to within 1/128, under 0.8 %) up to 2^37 ns, about 137 s. Larger
/// values fall in the last bucket; `max` keeps the true maximum.
///
/// Memory is fixed: `bucketCount` counters (31 KiB), allocated once. Recording
/// never allocates.
struct LatencyHistogram: Sendable, Equatable {
    /// Sub-buckets per power of two (2^7): the precision.
    private static let subBucketBits = 7
    private static let subBucketCount = 1 << subBucketBits
    /// The highest set bit a value may have and still get its own bucket.
    private static let topBit = 36
    static let bucketCount = subBucketCount + (topBit - subBucketBits + 1) * subBucketCount

    private var counts: [UInt64]
    /// Values recorded.
    private(set) var count: UInt64 = 0
    /// The largest value recorded (exact, not bucketed); 0 when empty.
    private(set) var max: UInt64 = 0

    init() {
        counts = Array(repeating: 0, count: Self.bucketCount)
    }

    var isEmpty: Bool { count == 0 }

    mutating func record(_ value: UInt64) {
        counts[Self.bucket(of: value)] &+= 1
        count &+= 1
        if value > max { max = value }
    }

    mutating func merge(_ other: LatencyHistogram) {
        guard !other.isEmpty else { return }
        for index in other.counts.indices where other.counts[index] != 0 {
            counts[index] &+= other.counts[index]
        }
        count &+= other.count
        if other.max > max { max = other.max }
    }

    /// The value at or below which `percentile` percent of the values lie: the
    /// top of the bucket holding that rank, never more than `max`. Nil when empty.
    func value(atPercentile percentile: Double) -> UInt64? {
        guard count > 0 else { return nil }
        let wanted = Swift.max(1, UInt64((percentile / 100 * Double(count)).rounded(.up)))
        var seen: UInt64 = 0
        for index in counts.indices where counts[index] != 0 {
            seen += counts[index]
            if seen >= wanted { return Swift.min(Self.upperBound(ofBucket: index), max) }
        }
        return max
    }

    /// The bucket a value is counted in.
    static func bucket(of value: UInt64) -> Int {
        if value < UInt64(subBucketCount) { return Int(value) }
        let highBit = 63 - value.leadingZeroBitCount
        if highBit > topBit { return bucketCount - 1 }
        let shift = highBit - subBucketBits
        let sub = Int(truncatingIfNeeded: value >> UInt64(shift)) - subBucketCount
        return subBucketCount + shift * subBucketCount + sub
    }

    /// The largest value counted in `bucket`.
    static func upperBound(ofBucket bucket: Int) -> UInt64 {
        if bucket < subBucketCount { return UInt64(bucket) }
        let shift = (bucket - subBucketCount) / subBucketCount
        let sub = (bucket - subBucketCount) % subBucketCount
        let low = UInt64(subBucketCount + sub) << UInt64(shift)
        return low + (UInt64(1) << UInt64(shift)) - 1
    }
}
