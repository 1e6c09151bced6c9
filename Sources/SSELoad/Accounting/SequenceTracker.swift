/// What one delivery was, judged against what its subscriber saw before.
enum DeliveryVerdict: Sendable, Equatable {
    /// Newer than anything seen from its publisher on this subscription.
    case fresh
    /// Publisher and sequence already seen on this subscription.
    case duplicate
    /// Older than the newest seen from its publisher, and not seen before.
    case outOfOrder
    /// Not from one of this run's publishers (a foreign or malformed payload).
    case unrecognized
}

/// One subscriber's order and duplicate check, with fixed memory: for each
/// publisher the highest sequence seen and a 64-bit map of which of the 64
/// sequences below it were seen (the anti-replay window of RFC 4303 §3.4.3).
///
/// A sequence seen twice is a duplicate; a lower one not yet seen is out of
/// order. More than 64 below the highest, the two cannot be told apart and
/// count as out of order. Sequences are per publisher and topic (see
/// `Payload`), so a subscriber sees each publisher's as 1, 2, 3, … and the
/// window covers the last 64 deliveries from each publisher.
struct SequenceTracker: Sendable {
    /// Per publisher: the highest sequence seen plus one (0: none yet).
    private var highest: [UInt64]
    /// Per publisher: bit i set when the sequence i + 1 below the highest was seen.
    private var window: [UInt64]

    init(publishers: Int) {
        highest = Array(repeating: 0, count: publishers)
        window = Array(repeating: 0, count: publishers)
    }

    mutating func record(publisher: Int, sequence: UInt64) -> DeliveryVerdict {
        guard publisher >= 0, publisher < highest.count, sequence < UInt64.max else { return .unrecognized }
        let next = sequence + 1
        let top = highest[publisher]
        if top == 0 {
            highest[publisher] = next
            window[publisher] = 0
            return .fresh
        }
        if next > top {
            // The old highest becomes bit shift - 1; bits pushed past bit 63 are forgotten.
            let shift = next - top
            let kept = shift >= 64 ? 0 : window[publisher] << shift
            window[publisher] = shift > 64 ? 0 : kept | UInt64(1) << (shift - 1)
            highest[publisher] = next
            return .fresh
        }
        if next == top { return .duplicate }
        let distance = top - next
        guard distance <= 64 else { return .outOfOrder }
        let bit = UInt64(1) << (distance - 1)
        if window[publisher] & bit != 0 { return .duplicate }
        window[publisher] |= bit
        return .outOfOrder
    }
}
