import Locking
import RedisClient
import Synchronization
import Testing
import TestSupport
@testable import StreamCluster

/// The link's timers on a clock that moves only when told (`TurnClock`), turn by
/// turn: the back-off sleeps until its deadline or until another master is named (or
/// shutdown), and the monitor waits for the next heartbeat's deadline or the link's
/// close — neither wakes on a tick to look.
struct LinkTimersTests {
    /// A back-off of 1 s ends when the clock reaches its deadline (not 1 ms before); the next
    /// ends the moment another master is named, its sleep cancelled, the clock not moved; one
    /// more ends at shutdown.
    @Test func theBackOffEndsAtItsDeadlineOrWhenAnotherMasterIsNamed() async throws {
        let clock = TurnClock()
        let engine = Self.engine(clock: clock, redis: "redis://127.0.0.1:1")
        let first = Finished { await engine.backOff(shard: 0, .seconds(1)) }
        #expect(try await eventually { clock.sleeping == [.seconds(1)] })
        clock.advance(by: .milliseconds(999))
        try await Task.sleep(for: .milliseconds(100))
        #expect(!first.done && clock.sleeping == [.milliseconds(1)], "the back-off ended before its deadline")
        clock.advance(by: .milliseconds(1))
        #expect(try await eventually { first.done }, "the back-off did not end at its deadline")

        let second = Finished { await engine.backOff(shard: 0, .seconds(1)) }
        #expect(try await eventually { clock.sleeping == [.seconds(1)] })
        await engine.requestRelink(shard: 0)
        #expect(try await eventually { second.done }, "the back-off did not end when a new master was named")
        #expect(clock.sleeping.isEmpty, "its sleep was not cancelled")

        let other = Self.engine(clock: clock, redis: "redis://127.0.0.1:1")
        let third = Finished { await other.backOff(shard: 0, .seconds(1)) }
        #expect(try await eventually { clock.sleeping == [.seconds(1)] })
        await other.shutdown()
        #expect(try await eventually { third.done }, "the back-off did not end at shutdown")
        #expect(clock.sleeping.isEmpty)
    }

    /// On a real Redis: once linked, the only timer is the next heartbeat's, 1 s away, and
    /// nothing runs until the clock reaches it (one probe sent); then the second heartbeat
    /// (two probes). A connection of the link closed is noticed at once, the clock not moved:
    /// the link is made again (attempt 0, no back-off) and ready.
    @Test func theMonitorWaitsForTheHeartbeatOrTheLinksClose() async throws {
        let redis = try await RedisServer.start()
        defer { Task { await redis.stop() } }
        let clock = TurnClock()
        let engine = Self.engine(clock: clock, redis: redis.url)
        let running = Task { await engine.run() }
        defer { Task { await engine.shutdown(); await running.value } }
        #expect(try await eventually { engine.isReady }, "the link never came up")
        #expect(try await eventually { clock.sleeping == [.seconds(1)] }, "timers: \(clock.sleeping)")
        try await Task.sleep(for: .milliseconds(200))
        #expect(await engine.shards[0].probesSent == 1, "a heartbeat ran before its deadline")
        clock.advance(by: .milliseconds(999))
        try await Task.sleep(for: .milliseconds(200))
        #expect(await engine.shards[0].probesSent == 1, "a heartbeat ran before its deadline")
        clock.advance(by: .milliseconds(1))
        #expect(try await eventually { await engine.shards[0].probesSent == 2 }, "the second heartbeat never ran")
        #expect(try await eventually { clock.sleeping == [.seconds(1)] })

        let generation = try #require(await engine.link(shard: 0)?.generation)
        await engine.link(shard: 0)?.subscriber.close()
        #expect(try await eventually {
            let now = await engine.link(shard: 0)?.generation
            return now != nil && now != generation && engine.isReady
        }, "the closed link was not made again while the clock stood still")
    }

    /// A connect attempt to a stopped Redis (its TCP still accepts, nothing answers) is
    /// abandoned the moment another master is named, not at its timeout (30 s here: far
    /// beyond the wait, so that a machine loaded by every suite starting at once cannot
    /// pass the timeout off as the abandonment, nor fail a bound meant for the abandonment),
    /// and what it opened is closed: once resumed, that Redis has no connection of it left.
    @Test func aConnectAttemptEndsWhenAnotherMasterIsNamed() async throws {
        let redis = try await RedisServer.start()
        defer { Task { await redis.stop() } }
        let engine = Self.engine(clock: TurnClock(), redis: redis.url, commandTimeout: .seconds(30))
        redis.pause()
        let outcome = Locked<String?>(nil)
        let attempt = Finished {
            let result: String
            switch await engine.connectUnlessRelinked(shard: 0) {
            case .linked: result = "linked"
            case .failed(let reason): result = "failed: \(reason.text)"
            case .abandoned: result = "abandoned"
            }
            outcome.withLock { $0 = result }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(!attempt.done, "the attempt ended before anything was named: \(outcome.withLock { $0 } ?? "")")
        let named = ContinuousClock.now
        await engine.requestRelink(shard: 0)
        #expect(try await eventually(within: 10) { attempt.done }, "the attempt went on after another master was named")
        // Well before the attempt's own timeout (at once on a quiet machine: under 0.1 s).
        #expect(ContinuousClock.now - named < .seconds(10))
        #expect(outcome.withLock { $0 } == "abandoned")
        redis.resume()
        var clients = ""
        #expect(try await eventually(within: 5) {
            // Only redis-cli's own connection left.
            clients = await RedisCLI.run(port: redis.port, ["CLIENT", "LIST"])
            return clients.split(whereSeparator: \.isNewline).count == 1
        }, "the abandoned attempt left connections open: \(clients)")
        await engine.shutdown()
    }

    private static func engine(clock: TurnClock, redis: String, commandTimeout: Duration = .seconds(5)) -> ClusterEngine {
        var configuration = ClusterConfiguration(redis: try! RedisEndpoint(parsing: redis))
        configuration.clock = clock
        configuration.connectTimeout = .milliseconds(500)
        configuration.commandTimeout = commandTimeout
        return ClusterEngine(configuration: configuration)
    }
}

/// A task whose end the test looks at without waiting on it (a wait that never ends would hang the test).
private final class Finished: Sendable {
    private final class Flag: Sendable {
        let value = Atomic(false)
    }

    private let flag = Flag()
    private let task: Task<Void, Never>

    init(_ body: @escaping @Sendable () async -> Void) {
        let flag = flag
        task = Task {
            await body()
            flag.value.store(true, ordering: .sequentiallyConsistent)
        }
    }

    var done: Bool { flag.value.load(ordering: .sequentiallyConsistent) }
}
