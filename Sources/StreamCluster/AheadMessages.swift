import StreamHub

/// Events this gateway published whose ids are ahead of what its mirror holds: the
/// script's reply came before the pub/sub messages of other gateways' earlier ids.
/// Each waits here, in id order, until those arrive, then applies at once (before
/// its own echo, which is then skipped as held).
///
/// Only a shortcut: every value also comes by pub/sub, so dropping one (past the
/// bound, or on any phase change) loses nothing, it is then applied from its echo.
struct AheadMessages: Equatable {
    /// At most this many wait; a further one is left to its echo.
    static let limit = 256

    /// Oldest id first.
    private var messages: [ClusterMessage] = []

    var isEmpty: Bool { messages.isEmpty }
    var count: Int { messages.count }

    /// Keeps `message` in id order (a second copy of an id is ignored).
    mutating func hold(_ message: ClusterMessage) {
        guard messages.count < Self.limit else { return }
        var index = messages.endIndex
        while index > 0, messages[index - 1].id > message.id { index -= 1 }
        if index > 0, messages[index - 1].id == message.id { return }
        messages.insert(message, at: index)
    }

    /// The next message to apply after `held` (the id the mirror holds): those at or
    /// below it are dropped (they came by pub/sub meanwhile); nil while the oldest
    /// left is further ahead.
    mutating func next(after held: UInt64) -> ClusterMessage? {
        var dropped = 0
        while dropped < messages.count, messages[dropped].id <= held { dropped += 1 }
        if dropped > 0 { messages.removeFirst(dropped) }
        guard let first = messages.first, first.id == held + 1 else { return nil }
        messages.removeFirst()
        return first
    }
}
