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
    /// Runs of ids after a held event that hold no value (a cluster's gateway found them
    /// gone: `noteSkipped`), oldest first, each starting right after a held id or the
    /// previous run. A resume across one gets a `gap` there; when the event before it
    /// leaves the window, the run leaves with it (`lastEvictedID` passes it).
    private(set) var holes: [(after: UInt64, through: UInt64)] = []

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
            evictOldest()  // With capacity 1 this empties the window and releases its storage.
        }
        if count == storage.count {
            // Full storage below capacity (or none): straighten the ring, then grow by one slot.
            if head != 0 {
                storage = (0..<count).map { storage[(head + $0) % storage.count] }
                head = 0
            }
            storage.append(nil)
        }
        storage[(head + count) % storage.count] = Entry(id: id, at: now, frame: frame)
        count += 1
    }

    /// Records that the ids after `after` (the newest the topic had) through `id` hold
    /// no value (events a cluster's shared window no longer has). The held events stay:
    /// a resume from before them gets them, then a `gap` at the run (`replay`). With
    /// nothing held, a resume from before `id` is told of the gap at its start.
    mutating func noteSkipped(after: UInt64, through id: UInt64) {
        guard count > 0, after >= entry(at: count - 1).id else {
            // Nothing held to replay before the run (or the run reaches back into what
            // is held, which a cluster does not do): everything up to `id` counts as gone.
            // Each hole leaves with the held event before it, so none outlives this.
            while count > 0, entry(at: 0).id <= id { evictOldest() }
            lastEvictedID = max(lastEvictedID, id)
            return
        }
        if let last = holes.last, last.through >= after {
            holes[holes.count - 1].through = max(last.through, id)
        } else {
            holes.append((after, id))
        }
    }

    /// Drops events older than `maxAge` at `now`.
    mutating func prune(now: ContinuousClock.Instant) {
        while count > 0, now - entry(at: 0).at > maxAge {
            evictOldest()
        }
    }

    /// What a resume after `id` gets, oldest first: a `gap` at `id + 1` if events after
    /// `id` have left the window, then each held event with a greater id, and where it
    /// would cross a run of ids that hold no value, a `gap` naming the first of them it
    /// can no longer have.
    func entries(after id: UInt64) -> [Replayed] {
        var entries: [Replayed] = id < lastEvictedID ? [.gap(firstMissingID: id + 1)] : []
        var hole = holes.firstIndex { $0.through > id } ?? holes.count
        for index in 0..<count {
            let entry = entry(at: index)
            guard entry.id > id else { continue }
            while hole < holes.count, holes[hole].through < entry.id {
                entries.append(.gap(firstMissingID: max(holes[hole].after, id) + 1))
                hole += 1
            }
            entries.append(.event(id: entry.id, frame: entry.frame))
        }
        while hole < holes.count {
            entries.append(.gap(firstMissingID: max(holes[hole].after, id) + 1))
            hole += 1
        }
        return entries
    }

    /// One thing a resume gets from the window.
    enum Replayed: Equatable {
        case event(id: UInt64, frame: [UInt8])
        case gap(firstMissingID: UInt64)
    }

    private func entry(at index: Int) -> Entry {
        storage[(head + index) % storage.count]!
    }

    private mutating func evictOldest() {
        lastEvictedID = entry(at: 0).id
        // A run of ids right after it leaves with it.
        if let first = holes.first, first.after <= lastEvictedID {
            lastEvictedID = max(lastEvictedID, first.through)
            holes.removeFirst()
        }
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        if count == 0 {
            storage = []
            holes = []  // Empty by now (each left with the event before it): its storage released too.
            head = 0
        }
    }
}
