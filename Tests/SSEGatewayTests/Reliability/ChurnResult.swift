import Testing

extension ChurnCycle {
    /// What a cycle saw.
    struct Result: Sendable {
        var sessions = 0
        var graceful = 0
        var abrupt = 0
        var beforeHead = 0
        var eventsRead = 0
        var publishes = 0
        var survivors = 0
        var problems: [String] = []

        mutating func merge(_ other: Result) {
            sessions += other.sessions
            graceful += other.graceful
            abrupt += other.abrupt
            beforeHead += other.beforeHead
            eventsRead += other.eventsRead
            publishes += other.publishes
            survivors += other.survivors
            if problems.count < 10 { problems += other.problems.prefix(10 - problems.count) }
        }

        var summary: String {
            "\(sessions) sessions (\(graceful) FIN, \(abrupt) reset, \(beforeHead) of them before the head), "
                + "\(eventsRead) events read, \(publishes) publishes, \(survivors) survivors"
        }

        func expectClean() {
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }
    }
}
