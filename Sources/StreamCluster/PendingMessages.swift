import StreamHub

/// Pub/sub messages a followed topic holds while it is not live, in arrival order;
/// bounded (`FollowedTopic.pendingLimit`, `pendingByteLimit`): past the bound they are
/// dropped, and `overflowed` asks for another sync, which fetches them from Redis.
struct PendingMessages: Equatable {
    private var messages: [ClusterMessage] = []
    /// Index of the first message not yet taken.
    private var head = 0
    private var bytes = 0
    private(set) var overflowed = false

    var count: Int { messages.count - head }

    mutating func hold(_ message: ClusterMessage) {
        guard !overflowed else { return }
        let size = message.data.utf8.count
        guard count < FollowedTopic.pendingLimit, bytes + size <= FollowedTopic.pendingByteLimit else {
            self = PendingMessages()
            overflowed = true
            return
        }
        messages.append(message)
        bytes += size
    }

    mutating func takeFirst() -> ClusterMessage? {
        guard head < messages.count else {
            self = PendingMessages()
            return nil
        }
        let message = messages[head]
        head += 1
        bytes -= message.data.utf8.count
        return message
    }

    /// Gives back the message last taken (it waits for another sync).
    mutating func putBack(_ message: ClusterMessage) {
        precondition(head > 0 && messages[head - 1] == message, "put back a message not taken last")
        head -= 1
        bytes += message.data.utf8.count
    }

    static func == (lhs: PendingMessages, rhs: PendingMessages) -> Bool {
        lhs.overflowed == rhs.overflowed && lhs.messages[lhs.head...] == rhs.messages[rhs.head...]
    }
}
