import Locking
import RedisClient
import Testing
import TestSupport

/// `RedisSubscriber` against a real redis-server on 127.0.0.1.
@Suite(.timeLimit(.minutes(2)))
struct RedisSubscriberTests {
    static let timeout: Duration = .seconds(5)

    /// What a subscriber received, in order.
    final class Inbox: Sendable {
        let messages = Locked([RedisMessage]())
        var count: Int { messages.withLock { $0.count } }
        func add(_ message: RedisMessage) { messages.withLock { $0.append(message) } }
    }

    private func subscriber(_ server: RedisServer, _ inbox: Inbox) async throws -> RedisSubscriber {
        try await RedisSubscriber.connect(to: RedisURL(parsing: server.url), timeout: Self.timeout) { message in
            inbox.add(message)
        }
    }

    private func publisher(_ server: RedisServer) async throws -> RedisConnection {
        try await RedisConnection.connect(to: RedisURL(parsing: server.url), timeout: Self.timeout)
    }

    /// 10,000 messages, published by 100 concurrent pipelined callers after SUBSCRIBE returned, reach onMessage all and in Redis's order.
    @Test func tenThousandMessagesInOrder() async throws {
        let server = try await RedisServer.start()
        let inbox = Inbox()
        let subscriber = try await subscriber(server, inbox)
        defer { subscriber.close() }
        try await subscriber.subscribe([Array("a".utf8), Array("b".utf8)], timeout: Self.timeout)
        let redis = try await publisher(server)
        defer { redis.close() }
        // Each message's payload is its rank in Redis's own order of execution.
        let script = "return redis.call('PUBLISH', KEYS[1], redis.call('INCR', KEYS[2]))"
        let sha = try await redis.command(["SCRIPT", "LOAD", script], timeout: Self.timeout).string ?? ""
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    for _ in 0..<100 { _ = try await redis.command(["EVALSHA", sha, "2", "a", "rank"], timeout: Self.timeout) }
                }
            }
            try await group.waitForAll()
        }
        try await waitUntil { inbox.count >= 10_000 }
        let messages = inbox.messages.withLock { $0 }
        #expect(messages.count == 10_000)
        #expect(messages.allSatisfy { $0.channel == Array("a".utf8) })
        #expect(messages.map { String(decoding: $0.payload, as: UTF8.self) } == (1...10_000).map(String.init))
    }

    /// Messages of one publisher call sequence arrive in exactly the order they were published.
    @Test func sequentialPublishesArriveInOrder() async throws {
        let server = try await RedisServer.start()
        let inbox = Inbox()
        let subscriber = try await subscriber(server, inbox)
        defer { subscriber.close() }
        try await subscriber.subscribe([[0, 1, 2]], timeout: Self.timeout)
        let redis = try await publisher(server)
        defer { redis.close() }
        for index in 0..<300 {
            _ = try await redis.command([Array("PUBLISH".utf8), [0, 1, 2], [UInt8(index % 256), 0, 13, 10]], timeout: Self.timeout)
        }
        try await waitUntil { inbox.count >= 300 }
        let payloads = inbox.messages.withLock { $0.map(\.payload) }
        #expect(payloads == (0..<300).map { [UInt8($0 % 256), 0, 13, 10] })
    }

    /// After UNSUBSCRIBE returns, that channel's messages are no longer delivered; the others still are.
    @Test func unsubscribeStopsDelivery() async throws {
        let server = try await RedisServer.start()
        let inbox = Inbox()
        let subscriber = try await subscriber(server, inbox)
        defer { subscriber.close() }
        try await subscriber.subscribe([Array("x".utf8), Array("y".utf8)], timeout: Self.timeout)
        let redis = try await publisher(server)
        defer { redis.close() }
        #expect(try await redis.command(["PUBLISH", "x", "1"], timeout: Self.timeout) == .integer(1))
        try await subscriber.unsubscribe([Array("x".utf8)], timeout: Self.timeout)
        #expect(try await redis.command(["PUBLISH", "x", "2"], timeout: Self.timeout) == .integer(0))
        #expect(try await redis.command(["PUBLISH", "y", "3"], timeout: Self.timeout) == .integer(1))
        try await waitUntil { inbox.count >= 2 }
        try await subscriber.ping(timeout: Self.timeout)
        #expect(inbox.messages.withLock { $0.map(\.payload) } == [Array("1".utf8), Array("3".utf8)])
    }

    /// PING round-trips while subscribed (and before any SUBSCRIBE).
    @Test func pingWhileSubscribed() async throws {
        let server = try await RedisServer.start()
        let subscriber = try await subscriber(server, Inbox())
        defer { subscriber.close() }
        try await subscriber.ping(timeout: Self.timeout)
        try await subscriber.subscribe([Array("c".utf8)], timeout: Self.timeout)
        for _ in 0..<3 { try await subscriber.ping(timeout: Self.timeout) }
        #expect(subscriber.isOpen)
    }

    /// A command that subscribed mode refuses throws `.server` and the subscriber stays usable.
    @Test func refusedCommandKeepsTheSubscriber() async throws {
        let server = try await RedisServer.start(["--requirepass", "pw"])
        let subscriber = try await RedisSubscriber.connect(to: RedisURL(parsing: "redis://:pw@127.0.0.1:\(server.port)"),
                                                           timeout: Self.timeout) { _ in }
        defer { subscriber.close() }
        try await subscriber.subscribe([Array("c".utf8)], timeout: Self.timeout)
        try await subscriber.ping(timeout: Self.timeout)
        #expect(subscriber.isOpen)
    }

    /// Killing the server fires the subscriber's onClose and fails its calls with `.closed`.
    @Test func serverKilledFiresOnClose() async throws {
        let server = try await RedisServer.start()
        let subscriber = try await subscriber(server, Inbox())
        let closed = Locked(false)
        subscriber.onClose { closed.withLock { $0 = true } }
        try await subscriber.subscribe([Array("c".utf8)], timeout: Self.timeout)
        await server.kill()
        try await waitUntil { closed.withLock { $0 } }
        #expect(!subscriber.isOpen)
        await #expect(throws: RedisError.closed) { try await subscriber.ping(timeout: Self.timeout) }
    }

    /// A paused server makes a subscriber's PING throw `.timedOut` and closes it.
    @Test func pausedServerTimesOutPing() async throws {
        let server = try await RedisServer.start()
        let subscriber = try await subscriber(server, Inbox())
        try await subscriber.subscribe([Array("c".utf8)], timeout: Self.timeout)
        server.pause()
        defer { server.resume() }
        await #expect(throws: RedisError.timedOut) { try await subscriber.ping(timeout: .milliseconds(300)) }
        #expect(!subscriber.isOpen)
    }

    /// A reply that came while the reader was held in a slow `onMessage` (an engine busy
    /// elsewhere) is read before its deadline is judged: the call gets it, the connection
    /// stays open, instead of a `.timedOut` for a reply that was waiting in the socket.
    @Test func aReplyWaitingBehindASlowHandlerIsNotLate() async throws {
        let server = try await RedisServer.start()
        let handling = Locked(false)
        let subscriber = try await RedisSubscriber.connect(to: RedisURL(parsing: server.url), timeout: Self.timeout) { _ in
            handling.withLock { $0 = true }
            try? await Task.sleep(for: .milliseconds(800))
        }
        defer { subscriber.close() }
        try await subscriber.subscribe([Array("slow".utf8)], timeout: Self.timeout)
        let redis = try await publisher(server)
        defer { redis.close() }
        _ = try await redis.publish(Array("m".utf8), to: Array("slow".utf8), mode: .global, timeout: Self.timeout)
        try await waitUntil { handling.withLock { $0 } }
        // Sent while the handler sleeps: PONG comes within a millisecond, read 800 ms later.
        try await subscriber.ping(timeout: .milliseconds(300))
        #expect(subscriber.isOpen)
    }
}
