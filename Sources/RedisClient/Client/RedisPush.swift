/// What a subscriber connection receives without asking: a message on a channel
/// it subscribed to, or the end of a sharded subscription that Redis Cluster
/// decided (the channel's slot left this node).
public enum RedisPush: Sendable, Equatable {
    /// A `message` (SUBSCRIBE) or `smessage` (SSUBSCRIBE) push.
    case message(RedisMessage)
    /// A `sunsubscribe` push nobody asked for: Redis Cluster ended the sharded
    /// subscription to `channel` because its slot moved to another master (a
    /// reshard) or this node stopped serving it (it became a replica). Messages
    /// published on the channel from now on go to subscribers of the node that
    /// serves the slot: subscribe there (the slot map, refreshed, says which).
    ///
    /// It can arrive once more for a channel the caller is unsubscribing from
    /// itself at that moment (the server's push and its reply look alike); a
    /// caller ignores it for channels it no longer wants.
    case shardChannelUnsubscribed(channel: [UInt8])

    /// The push `reply` is, or nil when it is a reply to a command: every
    /// `message`/`smessage`, and a `sunsubscribe` unless `awaited(channel)` says
    /// the oldest pending command is a SUNSUBSCRIBE of that channel.
    init?(_ reply: Reply, awaitedShardUnsubscribe awaited: ([UInt8]) -> Bool) {
        guard case .value(.array(let elements)) = reply, elements.count == 3,
              case .bulk(let kind) = elements[0], case .bulk(let channel) = elements[1] else { return nil }
        if kind.elementsEqual("message".utf8) || kind.elementsEqual("smessage".utf8) {
            guard case .bulk(let payload) = elements[2] else { return nil }
            self = .message(RedisMessage(channel: channel, payload: payload))
        } else if kind.elementsEqual("sunsubscribe".utf8), case .integer = elements[2], !awaited(channel) {
            self = .shardChannelUnsubscribed(channel: channel)
        } else {
            return nil
        }
    }
}
