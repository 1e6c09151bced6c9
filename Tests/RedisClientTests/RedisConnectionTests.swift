import Glibc
import HTTPCore
import Locking
@testable import RedisClient
import Testing
import TestSupport

/// `RedisConnection` against a real redis-server on 127.0.0.1.
@Suite(.timeLimit(.minutes(2)))
struct RedisConnectionTests {
    static let timeout: Duration = .seconds(5)

    private func connect(_ server: RedisServer, path: String = "") async throws -> RedisConnection {
        try await RedisConnection.connect(to: RedisURL(parsing: server.url + path), timeout: Self.timeout)
    }

    /// SET, GET and INCR round-trip their values.
    @Test func setGetIncr() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        defer { redis.close() }
        #expect(try await redis.command(["SET", "k", "v"], timeout: Self.timeout) == .status("OK"))
        #expect(try await redis.command(["GET", "k"], timeout: Self.timeout) == .bulk(Array("v".utf8)))
        #expect(try await redis.command(["GET", "missing"], timeout: Self.timeout) == .null)
        #expect(try await redis.command(["INCR", "n"], timeout: Self.timeout) == .integer(1))
        #expect(try await redis.command(["INCRBY", "n", "41"], timeout: Self.timeout).integer == 42)
        #expect(try await redis.command(["GET", "n"], timeout: Self.timeout).integer == 42)
        #expect(try await redis.command(["RPUSH", "l", "a", "b"], timeout: Self.timeout) == .integer(2))
        #expect(try await redis.command(["LRANGE", "l", "0", "-1"], timeout: Self.timeout)
            == .array([.bulk(Array("a".utf8)), .bulk(Array("b".utf8))]))
    }

    /// A caller whose task is cancelled while Redis holds its reply (a BLPOP that blocks) stops waiting with `.cancelled`; the reply that comes later is dropped and the connection answers the next command.
    @Test func cancelledCallerStopsWaitingAndTheConnectionGoesOn() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        let observer = try await connect(server)
        defer { redis.close(); observer.close() }
        let blocked = Task { () -> RedisError? in
            do {
                _ = try await redis.command(["BLPOP", "never", "2"], timeout: .seconds(30))
                return nil
            } catch {
                return error as? RedisError
            }
        }
        // Sent before it is cancelled: Redis counts it among its blocked clients.
        #expect(try await eventually(upTo: 2) {
            let info = try await observer.command(["INFO", "clients"], timeout: Self.timeout)
            let text = String(decoding: info.bytes ?? [], as: UTF8.self)
            return text.split(separator: "\r\n").first { $0.hasPrefix("blocked_clients:") }
                .flatMap { Int($0.dropFirst("blocked_clients:".count)) } == 1
        })
        blocked.cancel()
        #expect(await blocked.value == RedisError.cancelled)
        // BLPOP's nil reply (after its 2 s) goes to nobody; PING gets its own.
        #expect(try await redis.command(["PING"], timeout: Self.timeout) == .status("PONG"))
        #expect(try await redis.command(["SET", "after", "1"], timeout: Self.timeout) == .status("OK"))
    }

    /// A call that ignores cancellation is answered though its task was cancelled before it was sent.
    @Test func aCallIgnoringCancellationIsAnsweredAnyway() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        defer { redis.close() }
        let call = Task { () -> Result<RedisValue, RedisError> in
            do throws(RedisError) {
                return .success(try await redis.commandIgnoringCancellation(RedisArguments(["INCR", "counted"]), timeout: Self.timeout))
            } catch {
                return .failure(error)
            }
        }
        call.cancel()
        #expect(await call.value == .success(.integer(1)))
        #expect(try await redis.command(["GET", "counted"], timeout: Self.timeout) == .bulk(Array("1".utf8)))
    }

    /// 1,000 concurrent INCRs are pipelined and each caller gets its own reply, in order.
    @Test func thousandConcurrentCommandsAnsweredInOrder() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        defer { redis.close() }
        let results = try await withThrowingTaskGroup(of: (Int, Int64).self) { group in
            for index in 0..<1000 {
                group.addTask {
                    let value = try await redis.command(["RPUSH", "order", String(index)], timeout: Self.timeout)
                    return (index, value.integer ?? -1)
                }
            }
            var all: [(Int, Int64)] = []
            for try await result in group { all.append(result) }
            return all
        }
        #expect(results.count == 1000)
        // The reply each caller got is the list's length after its own push: its position in the list.
        let list = try await redis.command(["LRANGE", "order", "0", "-1"], timeout: Self.timeout).array ?? []
        #expect(list.count == 1000)
        for (index, length) in results {
            #expect(list[Int(length) - 1].string == String(index))
        }
        #expect(Set(results.map(\.1)) == Set(1...1000))
    }

    /// Commands issued together share writes and their replies share reads (printed: the batching achieved).
    @Test func concurrentCommandsShareWritesAndReads() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        defer { redis.close() }
        let script = "return redis.call('INCR', KEYS[1])"
        let sha = try await redis.command(["SCRIPT", "LOAD", script], timeout: Self.timeout).string ?? ""
        let before = redis.ioCounts
        let start = ContinuousClock.now
        let callers = 100, each = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    for _ in 0..<each { _ = try await redis.command(["EVALSHA", sha, "1", "n"], timeout: Self.timeout) }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = ContinuousClock.now - start
        let after = redis.ioCounts
        let writes = after.writes - before.writes, reads = after.reads - before.reads
        print("RedisClient: \(callers * each) EVALSHA from \(callers) callers in \(elapsed): \(writes) writes, \(reads) reads")
        #expect(try await redis.command(["GET", "n"], timeout: Self.timeout).integer == Int64(callers * each))
        #expect(writes < UInt64(callers * each / 2))
        #expect(reads < UInt64(callers * each / 2))
    }

    /// Values with NUL, CR and LF bytes, empty values and a 1 MiB value come back byte for byte.
    @Test func binarySafeValues() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        defer { redis.close() }
        let large = Payload.bytes(1 << 20, seed: 7)
        let values: [[UInt8]] = [[0, 13, 10, 0, 255], [], Array("\r\n$3\r\n".utf8), large]
        for (index, value) in values.enumerated() {
            let key = [UInt8(index), 0, 10]
            #expect(try await redis.command([Array("SET".utf8), key, value], timeout: Self.timeout) == .status("OK"))
            let back = try await redis.command([Array("GET".utf8), key], timeout: Self.timeout).bytes ?? [1]
            #expect(Payload.same(back, value), "value \(index)")
        }
    }

    /// An error reply throws `.server` and the connection stays usable.
    @Test func errorReplyKeepsTheConnection() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        defer { redis.close() }
        _ = try await redis.command(["SET", "s", "text"], timeout: Self.timeout)
        await #expect(throws: RedisError.server("ERR value is not an integer or out of range")) {
            try await redis.command(["INCR", "s"], timeout: Self.timeout)
        }
        #expect(redis.isOpen)
        #expect(try await redis.command(["PING"], timeout: Self.timeout) == .status("PONG"))
    }

    /// EVALSHA of a script Redis does not know throws `.server("NOSCRIPT…")`; after SCRIPT LOAD it runs.
    @Test func evalshaOfUnknownScript() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        defer { redis.close() }
        let script = "return redis.call('INCRBY', KEYS[1], ARGV[1])"
        let sha = try await redis.command(["SCRIPT", "LOAD", script], timeout: Self.timeout).string ?? ""
        await #expect {
            try await redis.command(["EVALSHA", String(repeating: "0", count: 40), "0"], timeout: Self.timeout)
        } throws: { error in
            guard case .server(let message) = error as? RedisError else { return false }
            return message.hasPrefix("NOSCRIPT")
        }
        #expect(try await redis.command(["EVALSHA", sha, "1", "counter", "5"], timeout: Self.timeout) == .integer(5))
    }

    /// With `--requirepass`, the password of the URL logs in; a wrong one is `.unreachable`; none gets NOAUTH.
    @Test func authWithPassword() async throws {
        let server = try await RedisServer.start(["--requirepass", "s3cr@t"])
        let redis = try await connect(server)
        await #expect {
            try await redis.command(["GET", "x"], timeout: Self.timeout)
        } throws: { error in
            guard case .server(let message) = error as? RedisError else { return false }
            return message.hasPrefix("NOAUTH")
        }
        redis.close()
        let url = "redis://:s3cr%40t@127.0.0.1:\(server.port)"
        let authed = try await RedisConnection.connect(to: RedisURL(parsing: url), timeout: Self.timeout)
        defer { authed.close() }
        #expect(try await authed.command(["PING"], timeout: Self.timeout) == .status("PONG"))
        let withUser = try await RedisConnection.connect(to: RedisURL(parsing: "redis://default:s3cr%40t@127.0.0.1:\(server.port)"),
                                                         timeout: Self.timeout)
        withUser.close()
        await #expect {
            try await RedisConnection.connect(to: RedisURL(parsing: "redis://:wrong@127.0.0.1:\(server.port)"), timeout: Self.timeout)
        } throws: { error in
            guard case .unreachable(let reason) = error as? RedisError else { return false }
            return reason.hasPrefix("AUTH refused: WRONGPASS")
        }
    }

    /// The URL's database is SELECTed: keys of db 3 are not in db 0.
    @Test func selectsTheDatabase() async throws {
        let server = try await RedisServer.start()
        let db3 = try await connect(server, path: "/3")
        defer { db3.close() }
        let db0 = try await connect(server)
        defer { db0.close() }
        _ = try await db3.command(["SET", "where", "three"], timeout: Self.timeout)
        #expect(try await db0.command(["GET", "where"], timeout: Self.timeout) == .null)
        #expect(try await db3.command(["GET", "where"], timeout: Self.timeout).string == "three")
        await #expect(throws: RedisError.unreachable("SELECT refused: ERR DB index is out of range")) {
            try await connect(server, path: "/99")
        }
    }

    /// A closed port is `.unreachable` at once, saying why.
    @Test func closedPortIsUnreachableQuickly() async throws {
        let listener = try Listener(address: SocketAddress(numericHost: "127.0.0.1", port: 0)!)
        let port = listener.port
        listener.close()
        let start = ContinuousClock.now
        await #expect(throws: RedisError.unreachable("connect to 127.0.0.1:\(port): Connection refused")) {
            try await RedisConnection.connect(to: RedisURL(parsing: "redis://127.0.0.1:\(port)"), timeout: Self.timeout)
        }
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    /// A name that does not resolve is `.unreachable` with the name in the reason.
    @Test func unresolvableHostIsUnreachable() async throws {
        await #expect {
            try await RedisConnection.connect(to: RedisURL(parsing: "redis://no-such-host.invalid"), timeout: Self.timeout)
        } throws: { error in
            guard case .unreachable(let reason) = error as? RedisError else { return false }
            return reason.contains("no-such-host.invalid")
        }
    }

    /// Killing the server fails pending calls with `.closed` and fires `onClose` once, told Redis ended it.
    @Test func serverKilledFailsPendingAndFiresOnClose() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        let closes = Locked(0)
        let ends = Locked<[RedisConnectionEnd]>([])
        redis.onClose { closes.withLock { $0 += 1 } }
        redis.onClose { end in ends.withLock { $0.append(end) } }
        // BLPOP keeps the call pending until the server dies.
        let pending = Task { try await redis.command(["BLPOP", "nothing", "0"], timeout: .seconds(30)) }
        try await waitUntil { (try? await server.clientCount(blocked: true)) == 1 }
        await server.kill()
        await #expect(throws: RedisError.closed) { try await pending.value }
        try await waitUntil { !redis.isOpen && closes.withLock { $0 } == 1 }
        await #expect(throws: RedisError.closed) { try await redis.command(["PING"], timeout: Self.timeout) }
        let late = Locked(false)
        redis.onClose { late.withLock { $0 = true } }
        #expect(late.withLock { $0 })
        #expect(closes.withLock { $0 } == 1)
        #expect(ends.withLock { $0 } == [.endedByRedis])
    }

    /// `CLIENT KILL` from another connection (what Sentinel sends to a node it reconfigures):
    /// the killed connection's handlers are told Redis ended it.
    @Test func clientKillIsEndedByRedis() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        let other = try await connect(server)
        let ends = Locked<[RedisConnectionEnd]>([])
        redis.onClose { end in ends.withLock { $0.append(end) } }
        let id = try #require(try await redis.command(["CLIENT", "ID"], timeout: Self.timeout).integer)
        _ = try await other.command(["CLIENT", "KILL", "ID", String(id)], timeout: Self.timeout)
        try await waitUntil { !redis.isOpen }
        #expect(ends.withLock { $0 } == [.endedByRedis])
        #expect(other.isOpen)
    }

    /// A paused server (SIGSTOP) makes the call throw `.timedOut` within its timeout, others `.closed`, and closes the connection.
    @Test func pausedServerTimesOut() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        server.pause()
        defer { server.resume() }
        let writes = redis.ioCounts.writes
        let other = Task { try await redis.command(["PING"], timeout: .seconds(10)) }
        // `other` goes first: its PING is written before the timed call is made.
        try await waitUntil { redis.ioCounts.writes > writes }
        // Timed from the call itself (the wait above took over a second once at the suites'
        // loaded start); its own 300 ms ended it, not `other`'s 10 s (which the errors'
        // cases below tell apart too), with 2.2 s of slack for a loaded machine.
        let start = ContinuousClock.now
        await #expect(throws: RedisError.timedOut) { try await redis.command(["PING"], timeout: .milliseconds(300)) }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(300) && elapsed < .milliseconds(2500))
        await #expect(throws: RedisError.closed) { try await other.value }
        #expect(!redis.isOpen)
        let end = Locked<RedisConnectionEnd?>(nil)
        redis.onClose { reason in end.withLock { $0 = reason } }
        #expect(end.withLock { $0 } == .replyLate)
    }

    /// `close` fails pending calls with `.closed`, fires `onClose`, and is idempotent.
    @Test func closeFailsPendingCalls() async throws {
        let server = try await RedisServer.start()
        let redis = try await connect(server)
        let closes = Locked(0)
        redis.onClose { closes.withLock { $0 += 1 } }
        let pending = Task { try await redis.command(["BLPOP", "nothing", "0"], timeout: .seconds(30)) }
        try await waitUntil { (try? await server.clientCount(blocked: true)) == 1 }
        redis.close()
        redis.close()
        await #expect(throws: RedisError.closed) { try await pending.value }
        #expect(closes.withLock { $0 } == 1)
        #expect(!redis.isOpen)
        let end = Locked<RedisConnectionEnd?>(nil)
        redis.onClose { reason in end.withLock { $0 = reason } }
        #expect(end.withLock { $0 } == .closedHere)
    }
}

/// Polls `condition` every 10 ms for up to 5 s (`eventually`); a test failure if it never holds.
func waitUntil(_ condition: () async -> Bool) async throws {
    if await !eventually(upTo: 5, condition) { Issue.record("condition not met within 5 s") }
}

extension RedisServer {
    /// Connected clients (blocked ones only with `blocked`), from INFO clients on a fresh connection.
    func clientCount(blocked: Bool = false) async throws -> Int {
        let redis = try await RedisConnection.connect(to: RedisURL(parsing: url), timeout: .seconds(5))
        defer { redis.close() }
        let info = try await redis.command(["INFO", "clients"], timeout: .seconds(5)).string ?? ""
        let field = blocked ? "blocked_clients:" : "connected_clients:"
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix(field) {
            return Int(line.dropFirst(field.count)) ?? -1
        }
        return -1
    }
}
