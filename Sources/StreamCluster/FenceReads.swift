import RedisClient

/// The reads of new subscribers' fences, in rounds: every subscriber that arrives
/// while no round is waiting to go out joins the next one, and a round reads each of
/// its topics once (`HMGET` of the topic's ids), however many subscribers want it.
/// A reconnect storm of thousands of subscribers of one topic then costs one read per
/// round (the worker sends one when its doorbell rings: once per loop turn at most),
/// not one per subscriber. A round is sent after every subscriber in it arrived, so
/// each fence is no older than what Redis held at its arrival.
///
/// The engine holds the one copy and resumes each waiter exactly once: with the
/// round's replies, or with none (its task was cancelled, the engine shut down).
struct FenceReads {
    typealias ID = UInt64
    /// A round's replies by topic; a topic missing failed (refused: 503).
    typealias Replies = [String: RedisValue]
    typealias Waiter = CheckedContinuation<Replies, Never>

    /// Subscribers in the round not sent yet, and the topics it reads.
    private var next: [ID] = []
    private var nextTopics: Set<String> = []
    /// Every waiting subscriber (in the next round or one under way).
    private var waiting: [ID: Waiter] = [:]
    private var lastID: ID = 0

    var isEmpty: Bool { waiting.isEmpty }

    mutating func nextID() -> ID {
        lastID += 1
        return lastID
    }

    /// A subscriber waits for the next round's reads of `topics`.
    mutating func add(_ id: ID, topics: [String], _ waiter: Waiter) {
        next.append(id)
        nextTopics.formUnion(topics)
        waiting[id] = waiter
    }

    /// The next round to send (its subscribers and topics), nil when nobody waits for one.
    mutating func takeRound() -> (waiters: [ID], topics: Set<String>)? {
        guard !next.isEmpty else { return nil }
        defer {
            next = []
            nextTopics = []
        }
        return (next, nextTopics)
    }

    /// Takes a waiter to resume (nil when resumed already: cancelled, or shut down).
    mutating func take(_ id: ID) -> Waiter? {
        waiting.removeValue(forKey: id)
    }

    /// Takes every waiter (the engine shuts down).
    mutating func takeAll() -> [Waiter] {
        defer {
            waiting = [:]
            next = []
            nextTopics = []
        }
        return Array(waiting.values)
    }
}
