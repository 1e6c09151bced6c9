/// A first-in first-out queue on one array: O(1) amortized at both ends
/// (`popLast` serves the deadline window's monotone queue).
///
/// Promises: the array is compacted once its popped prefix is at least half of
/// it, so memory follows what is queued, not what was ever queued.
struct FIFO<Element> {
    private var items: [Element] = []
    /// Index of the first element still queued.
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }
    var first: Element? { isEmpty ? nil : items[head] }
    var last: Element? { isEmpty ? nil : items[items.count - 1] }

    mutating func append(_ element: Element) {
        items.append(element)
    }

    /// Mutates the first element in place.
    mutating func updateFirst<R>(_ body: (inout Element) -> R) -> R {
        precondition(!isEmpty, "updateFirst on an empty FIFO")
        return body(&items[head])
    }

    mutating func popFirst() -> Element? {
        guard !isEmpty else { return nil }
        let element = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 4096)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return element
    }

    mutating func popLast() -> Element? {
        guard !isEmpty else { return nil }
        let element = items.removeLast()
        if head == items.count {
            items.removeAll(keepingCapacity: items.count <= 4096)
            head = 0
        }
        return element
    }

    /// Empties the queue, returning what it held in order.
    mutating func removeAll() -> ArraySlice<Element> {
        let all = items[head...]
        items = []
        head = 0
        return all
    }
}

/// The earliest deadline among the entries of a FIFO pipeline, in O(1)
/// amortized per entry: a monotone queue of (sequence, deadline) whose
/// deadlines increase, so its first element is the minimum (the classic
/// sliding-window minimum). Entries leave in the order they came.
struct DeadlineWindow {
    private var candidates = FIFO<(sequence: UInt64, deadline: ContinuousClock.Instant)>()

    /// The earliest deadline of the entries added and not removed.
    var earliest: ContinuousClock.Instant? { candidates.first?.deadline }

    /// Adds the entry with the next sequence number (sequences only grow).
    mutating func add(sequence: UInt64, deadline: ContinuousClock.Instant) {
        while let last = candidates.last, last.deadline >= deadline { _ = candidates.popLast() }
        candidates.append((sequence, deadline))
    }

    /// Removes the oldest entry, `sequence` (if it is still a candidate).
    mutating func remove(sequence: UInt64) {
        if candidates.first?.sequence == sequence { _ = candidates.popFirst() }
    }

    mutating func removeAll() {
        _ = candidates.removeAll()
    }
}
