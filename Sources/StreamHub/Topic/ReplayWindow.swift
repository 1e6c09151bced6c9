/// The events a topic holds for `Last-Event-ID` resumption: at most `capacity` of the
/// newest, none older than `maxAge`. An event aged exactly `maxAge` is held; it leaves
/// once strictly older. Ages are pruned on access with the caller's clock reading.
///
/// A ring over storage that grows to `capacity` and is released when the window
/// empties, so memory is bounded by `capacity` frames and idle topics hold none.
struct ReplayWindow {
    struct Entry {
        let id: UInt64
        let at: ContinuousClock.Instant
        /// The frame exactly as sent live (the same buffer, not a copy).
        let frame: [UInt8]
    }

    let capacity: Int
    let maxAge: Duration
    /// Slots; logical element i lives at `(head + i) % storage.count`.
    private var storage: [Entry?] = []
    private var head = 0
    private(set) var count = 0
    /// Id of the newest event that has left the window (by count or age); 0 if none.
    /// A client that has seen this id has lost nothing.
    private(set) var lastEvictedID: UInt64 = 0

    init(capacity: Int, maxAge: Duration) {
        self.capacity = capacity
        self.maxAge = maxAge
    }

    var isEmpty: Bool { count == 0 }

    /// Ids of the held events, oldest first (tests and diagnostics).
    var ids: [UInt64] { (0..<count).map { entry(at: $0).id } }

    mutating func append(id: UInt64, at now: ContinuousClock.Instant, frame: [UInt8]) {
        guard capacity > 0 else {
            lastEvictedID = id
            return
        }
        if count == capacity {
            evictOldest()
        } else if count == storage.count {
            // Full storage below capacity: straighten the ring, then grow by one slot.
            if head != 0 {
                storage = (0..<count).map { storage[(head + $0) % storage.count] }
                head = 0
            }
            storage.append(nil)
        }
        storage[(head + count) % storage.count] = Entry(id: id, at: now, frame: frame)
        count += 1
    }

    /// Records that every id up to `id` is gone, held or not (events a cluster's
    /// shared window no longer has): held ones are dropped, and a resume from
    /// before `id` is told of the gap.
    mutating func noteEvicted(through id: UInt64) {
        while count > 0, entry(at: 0).id <= id {
            evictOldest()
        }
        lastEvictedID = max(lastEvictedID, id)
    }

    /// Drops events older than `maxAge` at `now`.
    mutating func prune(now: ContinuousClock.Instant) {
        while count > 0, now - entry(at: 0).at > maxAge {
            evictOldest()
        }
    }

    /// Ids and frames of held events with id greater than `id`, oldest first.
    func entries(after id: UInt64) -> [(id: UInt64, frame: [UInt8])] {
        var entries: [(id: UInt64, frame: [UInt8])] = []
        for index in 0..<count {
            let entry = entry(at: index)
            if entry.id > id { entries.append((entry.id, entry.frame)) }
        }
        return entries
    }

    private func entry(at index: Int) -> Entry {
        storage[(head + index) % storage.count]!
    }

    private mutating func evictOldest() {
        lastEvictedID = entry(at: 0).id
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        if count == 0 {
            storage = []
            head = 0
        }
    }
}
