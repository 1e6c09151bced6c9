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
        #expect(window.entries(after: 5).map(\.frame) == [[6], [7]])
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

    /// With capacity 0 nothing is held and everything counts as evicted.
    @Test func zeroCapacity() {
        var window = ReplayWindow(capacity: 0, maxAge: .seconds(10))
        window.append(id: 1, at: t0, frame: [1])
        #expect(window.isEmpty)
        #expect(window.lastEvictedID == 1)
    }
}
