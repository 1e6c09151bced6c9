import HTTPCore

/// A message published on a channel, as a subscriber receives it.
public struct RedisMessage: Sendable, Equatable {
    public let channel: [UInt8]
    public let payload: [UInt8]

    public init(channel: [UInt8], payload: [UInt8]) {
        self.channel = channel
        self.payload = payload
    }
}

/// A connection in RESP2 subscribed mode: SUBSCRIBE, UNSUBSCRIBE, the sharded
/// SSUBSCRIBE and SUNSUBSCRIBE, and PING, and the messages of the channels it
/// subscribed to (`message` and `smessage` pushes alike).
///
/// Promises:
/// - `onMessage` (or `onPush`) is awaited for every push, in arrival order, by the
///   connection's one reader task (on the loop); nothing more is parsed or
///   delivered until it returns, so it must return promptly: the socket is not
///   read while it runs, and Redis disconnects a subscriber whose output buffer
///   grows past its limit. The reader otherwise reads whenever bytes arrive.
/// - `subscribe` returns once Redis confirmed every channel: every message
///   published after that is delivered (while the connection lives).
///   After `unsubscribe` returns, none of those channels is delivered any more.
/// - timeouts, errors, `onClose`, `close` and the bounds are those of `RedisConnection`.
/// - dropping the last reference closes the connection.
public final class RedisSubscriber: Sendable {
    private let core: PipelineCore

    private init(core: PipelineCore) {
        self.core = core
    }

    deinit {
        core.close()
    }

    /// Connects as `RedisConnection.connect` does; `onMessage` receives the messages
    /// (of SUBSCRIBE and SSUBSCRIBE alike). For a subscriber that must hear of the
    /// sharded subscriptions Redis Cluster ends (slots moving), use `onPush`.
    /// - Throws: only `.unreachable(reason)`.
    public static func connect(to url: RedisURL, timeout: Duration, loop: EventLoop = .shared,
                               onMessage: @escaping @Sendable (RedisMessage) async -> Void) async throws(RedisError) -> RedisSubscriber {
        try await connect(to: url, timeout: timeout, loop: loop, onPush: { push in
            if case .message(let message) = push { await onMessage(message) }
        })
    }

    /// Connects as `RedisConnection.connect` does; `onPush` receives every push:
    /// the messages, and the `sunsubscribe`s Redis Cluster sends unasked.
    /// Name the argument (`onPush: { … }`): a trailing closure picks `onMessage`
    /// (disfavoured, so that existing `connect(…) { message in … }` calls stay as they were).
    /// - Throws: only `.unreachable(reason)`.
    @_disfavoredOverload
    public static func connect(to url: RedisURL, timeout: Duration, loop: EventLoop = .shared,
                               onPush: @escaping @Sendable (RedisPush) async -> Void) async throws(RedisError) -> RedisSubscriber {
        RedisSubscriber(core: try await Connecting.open(url, timeout: timeout, loop: loop, onMessage: onPush))
    }

    /// Subscribes to `channels`; returns when Redis confirmed all of them.
    public func subscribe(_ channels: [[UInt8]], timeout: Duration) async throws(RedisError) {
        guard !channels.isEmpty else { return }
        _ = try await core.command(RedisArguments([Array("SUBSCRIBE".utf8)] + channels), replies: channels.count,
                                   timeout: timeout)
    }

    /// Unsubscribes from `channels`; returns when Redis confirmed all of them.
    public func unsubscribe(_ channels: [[UInt8]], timeout: Duration) async throws(RedisError) {
        guard !channels.isEmpty else { return }
        _ = try await core.command(RedisArguments([Array("UNSUBSCRIBE".utf8)] + channels), replies: channels.count,
                                   timeout: timeout)
    }

    /// Subscribes to the sharded channels `channels` (SSUBSCRIBE); returns when Redis
    /// confirmed all of them. Their messages (`SPUBLISH`) come to `onMessage`.
    ///
    /// On Redis Cluster every channel of one call must hash to one slot, served by
    /// this node (`HashSlot.grouping` makes the groups): otherwise this throws
    /// `.server` with `CROSSSLOT…` or `MOVED <slot> <host>:<port>`
    /// (`ClusterRedirection` parses it) and subscribes to none of them. Later, when
    /// the slot leaves this node, the subscription ends and `onPush` gets
    /// `.shardChannelUnsubscribed`.
    public func ssubscribe(_ channels: [[UInt8]], timeout: Duration) async throws(RedisError) {
        guard !channels.isEmpty else { return }
        _ = try await core.command(RedisArguments([Array("SSUBSCRIBE".utf8)] + channels), replies: channels.count,
                                   timeout: timeout)
    }

    /// Unsubscribes from the sharded channels `channels` (SUNSUBSCRIBE); returns when
    /// Redis confirmed all of them (also for channels the cluster had already ended).
    public func sunsubscribe(_ channels: [[UInt8]], timeout: Duration) async throws(RedisError) {
        guard !channels.isEmpty else { return }
        _ = try await core.command(RedisArguments([Array("SUNSUBSCRIBE".utf8)] + channels), replies: channels.count,
                                   shardUnsubscribes: Set(channels), timeout: timeout)
    }

    /// One round trip on this connection (a PING, answered in subscribed mode too).
    public func ping(timeout: Duration) async throws(RedisError) {
        _ = try await core.command(RedisArguments(["PING"]), timeout: timeout)
    }

    /// False once closed or lost.
    public var isOpen: Bool { core.isOpen }

    /// Runs `handler` once when the connection is closed or lost, told why; at once if it already is.
    public func onClose(_ handler: @escaping @Sendable (RedisConnectionEnd) -> Void) {
        core.onClose(handler)
    }

    /// Runs `handler` once when the connection is closed or lost; at once if it already is.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        core.onClose { _ in handler() }
    }

    /// Closes the connection; pending calls fail with `.closed`. Idempotent.
    public func close() {
        core.close()
    }
}
