import Testing
@testable import StreamHub

struct ReplayWindowTests {
    private let t0 = ContinuousClock.now

    /// The window keeps the newest `capacity` events and remembers the last evicted id.
    @Test func keepsNewestByCount() {
        var window = ReplayWindow(capacity: 3, maxAge: .seconds(60))
        for id in UInt64(1)...7 { window.append(id: id, at: t0, frame: [UInt8(id)]) }
        #expect(window.ids == [5, 6, 7])
        #expect(window.lastEvictedID == 4)
        #expect(window.entries(after: 5) == [.event(id: 6, frame: [6]), .event(id: 7, frame: [7])])
        // From before what is held: a gap at the first id it can no longer have.
        #expect(window.entries(after: 2) == [.gap(firstMissingID: 3), .event(id: 5, frame: [5]),
                                             .event(id: 6, frame: [6]), .event(id: 7, frame: [7])])
        #expect(window.entries(after: 4) == [.event(id: 5, frame: [5]), .event(id: 6, frame: [6]),
                                             .event(id: 7, frame: [7])])
    }

    /// An event aged exactly maxAge is held; one strictly older is pruned.
    @Test func maxAgeBoundary() {
        var window = ReplayWindow(capacity: 10, maxAge: .seconds(5))
        window.append(id: 1, at: t0, frame: [1])
        window.append(id: 2, at: t0 + .seconds(1), frame: [2])
        window.prune(now: t0 + .seconds(5))
        #expect(window.ids == [1, 2])
        window.prune(now: t0 + .seconds(5) + .nanoseconds(1))
        #expect(window.ids == [2])
        #expect(window.lastEvictedID == 1)
    }

    /// Pruning from the front and appending past the end keep the order (ring growth).
    @Test func ringStaysOrderedWhileGrowing() {
        var window = ReplayWindow(capacity: 4, maxAge: .seconds(10))
        window.append(id: 1, at: t0, frame: [1])
        window.append(id: 2, at: t0 + .seconds(5), frame: [2])
        window.prune(now: t0 + .seconds(11))
        for id in UInt64(3)...6 { window.append(id: id, at: t0 + .seconds(11), frame: [UInt8(id)]) }
        #expect(window.ids == [3, 4, 5, 6])
        #expect(window.lastEvictedID == 2)
        window.prune(now: t0 + .seconds(100))
        #expect(window.isEmpty)
        #expect(window.lastEvictedID == 6)
    }

    /// With capacity 1 each event replaces the one before (`--replay 1`: the eviction that
    /// empties the window must not leave it without a slot for the new event).
    @Test func capacityOneHoldsTheNewest() {
        var window = ReplayWindow(capacity: 1, maxAge: .seconds(10))
        for id in UInt64(1)...4 { window.append(id: id, at: t0, frame: [UInt8(id)]) }
        #expect(window.ids == [4])
        #expect(window.lastEvictedID == 3)
        #expect(window.entries(after: 2) == [.gap(firstMissingID: 3), .event(id: 4, frame: [4])])
        window.noteSkipped(after: 4, through: 6)
        window.append(id: 7, at: t0, frame: [7])
        #expect(window.ids == [7] && window.lastEvictedID == 6 && window.holes.isEmpty)
    }

    /// With capacity 0 nothing is held and everything counts as evicted.
    @Test func zeroCapacity() {
        var window = ReplayWindow(capacity: 0, maxAge: .seconds(10))
        window.append(id: 1, at: t0, frame: [1])
        #expect(window.isEmpty)
        #expect(window.lastEvictedID == 1)
    }

    /// Ids skipped after a held event (a cluster found them gone) keep what is held: a
    /// resume across them gets the events before, a `gap` at the first it can no longer
    /// have, then the rest; consecutive skips are one run.
    @Test func skippedIdsAreAGapBetweenHeldEvents() {
        var window = ReplayWindow(capacity: 10, maxAge: .seconds(60))
        for id in UInt64(1)...3 { window.append(id: id, at: t0, frame: [UInt8(id)]) }
        window.noteSkipped(after: 3, through: 6)
        window.noteSkipped(after: 6, through: 9)
        #expect(window.entries(after: 2) == [.event(id: 3, frame: [3]), .gap(firstMissingID: 4)])
        window.append(id: 10, at: t0, frame: [10])
        #expect(window.entries(after: 1) == [.event(id: 2, frame: [2]), .event(id: 3, frame: [3]),
                                             .gap(firstMissingID: 4), .event(id: 10, frame: [10])])
        // From inside the run: the rest of it is lost.
        #expect(window.entries(after: 5) == [.gap(firstMissingID: 6), .event(id: 10, frame: [10])])
        #expect(window.entries(after: 9) == [.event(id: 10, frame: [10])])
        #expect(window.lastEvictedID == 0)
    }

    /// A run of skipped ids leaves with the held event before it (the window then starts
    /// after it); with nothing held, skipped ids count as evicted at once.
    @Test func skippedIdsLeaveWithTheEventBeforeThem() {
        var window = ReplayWindow(capacity: 2, maxAge: .seconds(60))
        window.noteSkipped(after: 0, through: 4)
        #expect(window.lastEvictedID == 4 && window.holes.isEmpty)
        window.append(id: 5, at: t0, frame: [5])
        window.noteSkipped(after: 5, through: 7)
        window.append(id: 8, at: t0, frame: [8])
        #expect(window.holes.count == 1)
        window.append(id: 9, at: t0, frame: [9])
        #expect(window.ids == [8, 9])
        #expect(window.lastEvictedID == 7 && window.holes.isEmpty)
        #expect(window.entries(after: 7) == [.event(id: 8, frame: [8]), .event(id: 9, frame: [9])])
        #expect(window.entries(after: 5) == [.gap(firstMissingID: 6), .event(id: 8, frame: [8]),
                                             .event(id: 9, frame: [9])])
    }
}
