@testable import HTTPCore
import Testing

/// The token bucket behind the rapid-reset and SETTINGS/PING flood limits, driven by
/// instants a test chooses (no sleeping).
struct HTTP2AbuseBudgetTests {
    /// A burst up to the budget passes; the next event at the same instant is abuse.
    @Test func burstThenRefused() {
        var budget = HTTP2AbuseBudget<ContinuousClock>(burst: 5, perSecond: 2)
        let start = ContinuousClock.now
        for _ in 0..<5 { #expect(spend(&budget, start)) }
        #expect(!spend(&budget, start))
    }

    /// Time refills the budget at its rate, never past the burst.
    @Test func refillsAtItsRate() {
        var budget = HTTP2AbuseBudget<ContinuousClock>(burst: 3, perSecond: 2)
        let start = ContinuousClock.now
        for _ in 0..<3 { #expect(spend(&budget, start)) }
        #expect(!spend(&budget, start))
        // Half a second brings one token back.
        #expect(spend(&budget, start + .milliseconds(500)))
        #expect(!spend(&budget, start + .milliseconds(500)))
        // An hour later the bucket is full again, and holds no more than its burst.
        let later = start + .seconds(3600)
        for _ in 0..<3 { #expect(spend(&budget, later)) }
        #expect(!spend(&budget, later))
    }

    /// A steady rate at or below the refill never runs out (a browser closing tabs).
    @Test func steadyRateWithinBudget() {
        var budget = HTTP2AbuseBudget<ContinuousClock>(burst: 10, perSecond: 50)
        let start = ContinuousClock.now
        for i in 0..<10_000 { #expect(spend(&budget, start + .milliseconds(20 * i))) }
    }
}

/// The cleartext preface check: HTTP/2 only for bytes that begin the preface.
struct HTTP2PrefaceTests {
    /// The preface, whole or cut after `PRI `, is HTTP/2; an HTTP/1.1 request or a short read is not.
    @Test func decidesOnTheFirstRead() {
        #expect(HTTP2Preface.begins(HTTP2Preface.bytes + [0, 0, 0]))
        #expect(HTTP2Preface.begins(Array("PRI * HT".utf8)))
        #expect(!HTTP2Preface.begins(Array("GET / HTTP/1.1\r\nHost: t\r\n".utf8)))
        #expect(!HTTP2Preface.begins(Array("PRI".utf8)))
        #expect(!HTTP2Preface.begins(Array("PRI * HTTP/1.1\r\nHost: t\r\n".utf8)))
        var check = HTTP2PrefaceCheck.pending
        #expect(decide(&check, Array("GET / HTTP/1.1\r\nHost: t\r\n".utf8)) == "http1 GET / HTTP/1.1\r\nHost: t\r\n")
        #expect(decide(&check, HTTP2Preface.bytes) == "http1 \(String(decoding: HTTP2Preface.bytes, as: UTF8.self))")
    }

    /// A preface that arrives a byte at a time is still HTTP/2 (the first 3 bytes are held
    /// back); a request line that arrives a byte at a time is HTTP/1.1 at its first byte
    /// unless it starts as the preface, and then gets every byte held back.
    @Test func shortFirstReads() {
        var preface = HTTP2PrefaceCheck.pending
        let decisions = HTTP2Preface.bytes.prefix(4).map { decide(&preface, [$0]) }
        #expect(decisions == ["undecided", "undecided", "undecided", "http2"])
        guard case .http2(let initial) = preface else { return #expect(Bool(false), "not HTTP/2") }
        #expect(initial == Array("PRI ".utf8))
        var get = HTTP2PrefaceCheck.pending
        #expect(decide(&get, Array("G".utf8)) == "http1 G")
        var post = HTTP2PrefaceCheck.pending
        #expect(decide(&post, Array("P".utf8)) == "undecided")
        #expect(decide(&post, Array("OST / HTTP/1.1\r\nHost: t\r\n".utf8)) == "http1 POST / HTTP/1.1\r\nHost: t\r\n")
        var pri = HTTP2PrefaceCheck.pending
        #expect(decide(&pri, Array("PR".utf8)) == "undecided")
        #expect(decide(&pri, Array("I * HTTP/1.1\r\nHost: t\r\n".utf8)) == "http1 PRI * HTTP/1.1\r\nHost: t\r\n")
    }
}

/// One spend, outside `#expect` (which cannot call a mutating method).
private func spend(_ budget: inout HTTP2AbuseBudget<ContinuousClock>, _ now: ContinuousClock.Instant) -> Bool {
    budget.spend(at: now)
}

/// One check, as text: `undecided`, `http2`, or `http1` and the bytes the parser gets.
private func decide(_ check: inout HTTP2PrefaceCheck, _ bytes: [UInt8]) -> String {
    switch check.check(bytes) {
    case .undecided: return "undecided"
    case .http2: return "http2"
    case .http1(let bytes): return "http1 " + String(decoding: bytes, as: UTF8.self)
    }
}
