import Locking
import RedisClient
import Testing
import TestSupport

/// Sharded pub/sub on one redis-server (no cluster): SSUBSCRIBE works there too,
/// and the message-only API receives `smessage`s like `message`s.
@Suite(.timeLimit(.minutes(2)))
struct ShardedSubscriberTests {
    static let timeout: Duration = .seconds(5)

    /// SSUBSCRIBE then SPUBLISH reaches `onMessage`; after SUNSUBSCRIBE it no longer does, and the reply to
    /// SUNSUBSCRIBE is not mistaken for a push.
    @Test func shardedMessagesReachOnMessage() async throws {
        let server = try await RedisServer.start()
        let inbox = RedisSubscriberTests.Inbox()
        let subscriber = try await RedisSubscriber.connect(to: RedisURL(parsing: server.url), timeout: Self.timeout) { message in
            inbox.add(message)
        }
        defer { subscriber.close() }
        try await subscriber.ssubscribe([Array("a".utf8), Array("b".utf8)], timeout: Self.timeout)
        try await subscriber.subscribe([Array("c".utf8)], timeout: Self.timeout)
        let redis = try await RedisConnection.connect(to: RedisURL(parsing: server.url), timeout: Self.timeout)
        defer { redis.close() }
        #expect(try await redis.publish(Array("1".utf8), to: Array("a".utf8), mode: .sharded, timeout: Self.timeout) == 1)
        #expect(try await redis.publish(Array("2".utf8), to: Array("c".utf8), mode: .global, timeout: Self.timeout) == 1)
        try await subscriber.sunsubscribe([Array("a".utf8)], timeout: Self.timeout)
        #expect(try await redis.publish(Array("3".utf8), to: Array("a".utf8), mode: .sharded, timeout: Self.timeout) == 0)
        #expect(try await redis.publish(Array("4".utf8), to: Array("b".utf8), mode: .sharded, timeout: Self.timeout) == 1)
        try await waitUntil { inbox.count >= 3 }
        try await subscriber.ping(timeout: Self.timeout)
        #expect(inbox.messages.withLock { $0.map { String(decoding: $0.payload, as: UTF8.self) } } == ["1", "2", "4"])
        #expect(subscriber.isOpen)
    }

    /// SUNSUBSCRIBE of channels never subscribed returns (its replies are replies), and nothing is pushed.
    @Test func unsubscribingUnknownChannelsIsNoPush() async throws {
        let server = try await RedisServer.start()
        let pushes = RedisClusterTests.Pushes()
        let subscriber = try await RedisSubscriber.connect(to: RedisURL(parsing: server.url), timeout: Self.timeout,
                                                           onPush: { pushes.add($0) })
        defer { subscriber.close() }
        try await subscriber.sunsubscribe([Array("x".utf8), Array("y".utf8)], timeout: Self.timeout)
        try await subscriber.ssubscribe([Array("x".utf8)], timeout: Self.timeout)
        try await subscriber.ping(timeout: Self.timeout)
        #expect(pushes.all.withLock { $0 }.isEmpty)
        #expect(subscriber.isOpen)
    }

    /// On a server that is no cluster node, ASKING is refused: the call fails with that refusal, and the
    /// command's own reply does not reach the next caller.
    @Test func askingOutsideAClusterKeepsRepliesInPlace() async throws {
        let server = try await RedisServer.start()
        let redis = try await RedisConnection.connect(to: RedisURL(parsing: server.url), timeout: Self.timeout)
        defer { redis.close() }
        let asked = Task { try await redis.commandAfterAsking([Array("ECHO".utf8), Array("a".utf8)], timeout: Self.timeout) }
        let next = Task { try await redis.command(["ECHO", "b"], timeout: Self.timeout) }
        await #expect(throws: RedisError.self) { try await asked.value }
        #expect(try await next.value == .bulk(Array("b".utf8)))
        #expect(try await redis.command(["ECHO", "c"], timeout: Self.timeout) == .bulk(Array("c".utf8)))
    }
}
