import Testing
@testable import StreamHub

/// The forgotten topics' last events ids: bounded, the longest-forgotten let go first, a
/// name forgotten again counted as forgotten then.
struct ForgottenTopicsTests {
    @Test func theLongestForgottenIsLetGoFirst() {
        var forgotten = ForgottenTopics(capacity: 2)
        var letGo = [forgotten.note("a", lastEventsID: 3), forgotten.note("b", lastEventsID: 5)]
        letGo.append(forgotten.note("a", lastEventsID: 7))  // Used again and forgotten again: now the newest.
        letGo.append(forgotten.note("c", lastEventsID: 1))
        #expect(letGo == [0, 0, 0, 1], "only the note past the capacity lets one go")
        #expect(forgotten.lastEventsID(of: "a") == 7)
        #expect(forgotten.lastEventsID(of: "b") == nil)
        #expect(forgotten.lastEventsID(of: "c") == 1)
        #expect(forgotten.count == 2)
    }

    @Test func topicsWithoutEventsAndACapacityOfZeroRecordNothing() {
        var forgotten = ForgottenTopics(capacity: 2)
        forgotten.note("quiet", lastEventsID: 0)
        #expect(forgotten.lastEventsID(of: "quiet") == nil && forgotten.count == 0)
        var none = ForgottenTopics(capacity: 0)
        none.note("t", lastEventsID: 4)
        #expect(none.lastEventsID(of: "t") == nil && none.count == 0)
    }

    /// Churn, one name or many, keeps at most `capacity` names and the newest of each.
    @Test func churnStaysBounded() {
        var forgotten = ForgottenTopics(capacity: 3)
        for id in UInt64(1)...1_000 { forgotten.note("same", lastEventsID: id) }
        #expect(forgotten.count == 1 && forgotten.lastEventsID(of: "same") == 1_000)
        for index in 0..<1_000 { forgotten.note("t\(index % 7)", lastEventsID: UInt64(index + 1)) }
        #expect(forgotten.count == 3)
        // The last three noted: indices 997, 998, 999 are t3, t4, t5 (994 = 7 × 142).
        #expect(forgotten.lastEventsID(of: "t3") == 998 && forgotten.lastEventsID(of: "t4") == 999
                && forgotten.lastEventsID(of: "t5") == 1_000 && forgotten.lastEventsID(of: "t6") == nil)
        #expect(forgotten.lastEventsID(of: "same") == nil)
    }
}
