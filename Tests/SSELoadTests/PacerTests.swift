import Testing
@testable import SSELoad

/// Deadline-based pacing, with made-up instants instead of sleeping.
struct PacerTests {
    private let start = ContinuousClock.now

    /// The k-th publish is due at start + k / rate, however late the previous ones were sent.
    @Test func dueTimesComeFromTheStartNotFromTheLastSend() throws {
        var pacer = Pacer(start: start, end: start + .seconds(10), rate: 200)
        #expect(pacer.next(now: start) == start)
        // Woken 3 ms late for the second publish: it goes at once, the third is still due at 10 ms.
        #expect(pacer.next(now: start + .milliseconds(8)) == start + .milliseconds(8))
        #expect(pacer.next(now: start + .milliseconds(8)) == start + .milliseconds(10))
        #expect(pacer.due(1_000) == start + .seconds(5))
        #expect(pacer.issued == 3)
    }

    /// A publisher that fell behind sends back to back until caught up, and nothing is due at or after the end.
    @Test func catchesUpAndStopsAtTheEnd() {
        var pacer = Pacer(start: start, end: start + .seconds(1), rate: 10)
        let late = start + .milliseconds(450)
        for _ in 0..<5 { #expect(pacer.next(now: late) == late) }
        #expect(pacer.next(now: late) == start + .milliseconds(500))
        var sent = 6
        while pacer.next(now: start + .milliseconds(500)) != nil { sent += 1 }
        #expect(sent == 10)
        var stopped = Pacer(start: start, end: start + .seconds(1), rate: 10)
        #expect(stopped.next(now: start + .seconds(1)) == nil)
    }

    /// Unpaced (rate 0) hands out publishes at once until the end.
    @Test func unpacedGoesAtOnce() {
        var pacer = Pacer(start: start, end: start + .seconds(1), rate: 0)
        #expect(pacer.next(now: start + .milliseconds(3)) == start + .milliseconds(3))
        #expect(pacer.next(now: start + .seconds(1)) == nil)
    }
}
