import RedisClient

/// A gateway's two connections to Redis while it answers: one for commands
/// (publishes, fences, syncs, counts; pipelined) and one in subscribed mode for
/// the followed topics' channels and this gateway's probe.
struct RedisLink: Sendable {
    let command: RedisConnection
    let subscriber: RedisSubscriber
    /// Which link this is (messages of an older one are ignored).
    let generation: UInt64

    var isOpen: Bool { command.isOpen && subscriber.isOpen }

    func close() {
        command.close()
        subscriber.close()
    }
}
