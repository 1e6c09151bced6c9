import Testing

extension ChurnCycle {
    /// What a cycle saw.
    struct Result: Sendable {
        var sessions = 0
        var graceful = 0
        var abrupt = 0
        var beforeHead = 0
        /// Sessions that left during the TLS handshake (counted in `graceful` or `abrupt` too).
        var midHandshake = 0
        /// The longest a session that sent a FIN mid-handshake waited for the gateway to close.
        var slowestCloseAfterFIN = Duration.zero
        var eventsRead = 0
        var publishes = 0
        var survivors = 0
        var problems: [String] = []

        mutating func merge(_ other: Result) {
            sessions += other.sessions
            graceful += other.graceful
            abrupt += other.abrupt
            beforeHead += other.beforeHead
            midHandshake += other.midHandshake
            slowestCloseAfterFIN = max(slowestCloseAfterFIN, other.slowestCloseAfterFIN)
            eventsRead += other.eventsRead
            publishes += other.publishes
            survivors += other.survivors
            if problems.count < 10 { problems += other.problems.prefix(10 - problems.count) }
        }

        var summary: String {
            "\(sessions) sessions (\(graceful) FIN, \(abrupt) reset, \(beforeHead) of them before the head"
                + (midHandshake > 0 ? ", \(midHandshake) mid-handshake, closed at most "
                    + "\(Int(slowestCloseAfterFIN / .milliseconds(1))) ms after a FIN there), " : "), ")
                + "\(eventsRead) events read, \(publishes) publishes, \(survivors) survivors"
        }

        func expectClean() {
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }
    }
}
