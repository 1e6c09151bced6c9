/// How a message is published: on the node-wide pub/sub of one Redis (`PUBLISH`),
/// or on sharded pub/sub (`SPUBLISH`), which Redis Cluster keeps within the
/// master serving the channel's slot (and its replicas) instead of broadcasting it
/// to every node.
public enum RedisPublishMode: Sendable, Hashable {
    /// `PUBLISH`, for `SUBSCRIBE`rs.
    case global
    /// `SPUBLISH`, for `SSUBSCRIBE`rs; on Redis Cluster, sent to the master of the
    /// channel's slot (or a script's `redis.call` with the channel in the slot of
    /// the script's keys: `sse:{topic}:…` names share their topic's slot).
    case sharded

    /// The command's name.
    public var command: String {
        switch self {
        case .global: return "PUBLISH"
        case .sharded: return "SPUBLISH"
        }
    }
}

extension RedisConnection {
    /// Publishes `payload` on `channel`; returns how many subscribers (of this
    /// node, for `.sharded`) received it.
    /// - Throws: as `command`; on Redis Cluster a `.sharded` publish to a node not
    ///   serving the channel's slot throws `.server("MOVED …")` (`ClusterRedirection`).
    public func publish(_ payload: [UInt8], to channel: [UInt8], mode: RedisPublishMode,
                        timeout: Duration) async throws(RedisError) -> Int64 {
        let reply = try await command([Array(mode.command.utf8), channel, payload], timeout: timeout)
        guard let receivers = reply.integer else {
            close() // RedisError's promise: after a `.protocolError` the connection is closed.
            throw .protocolError("\(mode.command) did not return an integer")
        }
        return receivers
    }
}
