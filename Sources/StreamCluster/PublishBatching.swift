/// Which publishes go out together on one Redis connection, as one call of the publish
/// script (`PublishBatcher` does the sending; this is its bookkeeping, generic over
/// what a waiting publish is, so it is driven turn by turn in tests).
///
/// Promises:
/// - a publish that finds no batch forming starts one and leads it: its task sends
///   the batch a moment later (`take`), with whatever joined it meanwhile;
/// - a publish that finds one forming joins it, up to `maxCount` publishes and
///   `maxBytes`; past either, the batch is closed (its leader still takes it) and the
///   publish starts the next;
/// - nothing waits on an answer from Redis to be sent: a batch goes out when its
///   leader takes it, however many are on their way.
struct PublishBatching<Entry> {
    let maxCount: Int
    let maxBytes: Int

    /// The batch publishes join now, if any: its number, its publishes (the leader
    /// first) and their size in bytes.
    private(set) var forming: (number: UInt64, entries: [Entry], bytes: Int)?
    /// Batches closed by their bounds and not taken yet, by number.
    private(set) var closed: [UInt64: [Entry]] = [:]
    private var lastNumber: UInt64 = 0

    init(maxCount: Int = 128, maxBytes: Int = 1 << 20) {
        self.maxCount = max(1, maxCount)
        self.maxBytes = maxBytes
    }

    /// What becomes of a publish handed in.
    enum Admission: Equatable {
        /// It leads batch `number`: its task takes and sends it.
        case lead(UInt64)
        /// It joined the forming batch: the leader answers it.
        case wait
    }

    mutating func admit(_ entry: Entry, bytes: Int) -> Admission {
        if let batch = forming {
            if batch.entries.count < maxCount && batch.bytes + bytes <= maxBytes {
                forming!.entries.append(entry)
                forming!.bytes += bytes
                return .wait
            }
            closed[batch.number] = batch.entries
        }
        lastNumber += 1
        forming = (lastNumber, [entry], bytes)
        return .lead(lastNumber)
    }

    /// Batch `number`'s publishes, its leader first; it no longer takes any.
    mutating func take(_ number: UInt64) -> [Entry] {
        if let batch = forming, batch.number == number {
            forming = nil
            return batch.entries
        }
        return closed.removeValue(forKey: number) ?? []
    }
}

extension PublishBatching: Sendable where Entry: Sendable {}
