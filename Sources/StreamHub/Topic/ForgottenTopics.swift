/// The last events id of each topic the hub forgot (it held nothing worth keeping: no
/// subscriber, no state value, its window empty or expired), so that a topic used again
/// goes on from there instead of starting over at 1. A client that resumes with a
/// `Last-Event-ID` from before the topic was forgotten then gets a `gap` for what it
/// missed, never newer events that happen to carry the ids it expects.
///
/// Promises: at most `capacity` names are remembered, the longest-forgotten let go first
/// (such a topic starts again at 1); a name forgotten again replaces its record; the
/// queue of names behind the eviction order never holds more than `2 × capacity + 1`
/// entries, those already let go included. Only forgotten topics with at least one
/// event are recorded (a topic with a state value is never forgotten).
struct ForgottenTopics {
    let capacity: Int
    /// Each name's last events id, and the number of its entry in `order`.
    private var records: [String: (lastEventsID: UInt64, entry: UInt64)] = [:]
    /// Names in the order they were recorded, from `head` on. An entry whose number is
    /// not its name's in `records` is stale (the name was recorded again later).
    private var order: [(name: String, entry: UInt64)] = []
    private var head = 0
    private var nextEntry: UInt64 = 0

    init(capacity: Int) {
        self.capacity = capacity
    }

    var count: Int { records.count }

    /// The last events id of `name` when it was last forgotten, if it is remembered.
    func lastEventsID(of name: String) -> UInt64? {
        records.isEmpty ? nil : records[name]?.lastEventsID
    }

    /// Records that `name` was forgotten with `lastEventsID` as its last events id;
    /// returns how many records that let go (0 or 1; 0 when nothing is recorded).
    @discardableResult
    mutating func note(_ name: String, lastEventsID: UInt64) -> Int {
        guard capacity > 0, lastEventsID > 0 else { return 0 }
        nextEntry += 1
        var letGo = 0
        if records.updateValue((lastEventsID, nextEntry), forKey: name) == nil {
            while records.count > capacity {
                evictOldest()
                letGo += 1
            }
        }
        order.append((name, nextEntry))
        if order.count > 2 * capacity { compact() }
        return letGo
    }

    private mutating func evictOldest() {
        while head < order.count {
            let (name, entry) = order[head]
            head += 1
            if records[name]?.entry == entry {
                records[name] = nil
                return
            }
        }
    }

    /// Drops the entries before `head` and the stale ones: what is left is one per record.
    private mutating func compact() {
        order = order[head...].filter { records[$0.name]?.entry == $0.entry }
        head = 0
    }
}
