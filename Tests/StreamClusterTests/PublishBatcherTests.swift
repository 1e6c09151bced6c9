import HTTPCore
import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// Publishes that come faster than Redis answers go several to a script call, each
/// with its own outcome (`PublishBatcher`), against a real `redis-server`.
@Suite(.timeLimit(.minutes(1)))
struct PublishBatcherTests {
    /// 400 publishes at once on 8 topics, on the engine's event loop as a gateway's
    /// connections make them: a tenth as many script calls or fewer, and each topic's ids
    /// are 1…50 with no gap or repeat, each value once in the window.
    @Test func publishesAtOnceShareCallsAndKeepEveryTopicsIDs() async throws {
        try await withCluster(engines: 1) { redis, engines in
            let engine = engines[0]
            let callsBefore = try await redis.calls(of: "evalsha") + (try await redis.calls(of: "eval"))
            let ids = try await withThrowingTaskGroup(of: (String, UInt64).self) { group in
                for topic in 0..<8 {
                    for index in 0..<50 {
                        group.addTask(executorPreference: EventLoop.shared) {
                            ("t\(topic)", try await engine.publish("t\(topic)", .events, "v\(index)").id)
                        }
                    }
                }
                return try await group.reduce(into: [String: [UInt64]]()) { $0[$1.0, default: []].append($1.1) }
            }
            for topic in 0..<8 {
                #expect(ids["t\(topic)"]?.sorted() == Array(1...50), "topic t\(topic)")
                let window = try await redis.run(["XLEN", "sse:{t\(topic)}:events"])
                #expect(window.integer == 50)
            }
            let calls = try await redis.calls(of: "evalsha") + (try await redis.calls(of: "eval")) - callsBefore
            #expect(calls <= 40, "400 publishes took \(calls) script calls")
        }
    }

    /// A value whose keys Redis refuses (its id counter is not a hash) is refused alone,
    /// with Redis's reason; the publishes in the same calls are stored and answered.
    @Test func aValueRedisRefusesIsRefusedAloneInItsBatch() async throws {
        try await withCluster(engines: 1) { redis, engines in
            let engine = engines[0]
            _ = try await redis.run(["SET", "sse:{broken}:id", "not a hash"])
            let outcomes = await withTaskGroup(of: (String, Result<UInt64, PublishError>).self) { group in
                for index in 0..<60 {
                    let topic = index % 3 == 1 ? "broken" : "fine\(index % 3)"
                    group.addTask {
                        do throws(PublishError) {
                            return (topic, .success(try await engine.engine.publish(topic: topic, channel: .events,
                                                                                      data: "v\(index)", event: nil).id))
                        } catch {
                            return (topic, .failure(error))
                        }
                    }
                }
                return await group.reduce(into: [(String, Result<UInt64, PublishError>)]()) { $0.append($1) }
            }
            for (topic, outcome) in outcomes {
                switch (topic, outcome) {
                case ("broken", .failure(.unavailable(let reason))):
                    #expect(reason.contains("WRONGTYPE"), "\(reason)")
                case ("broken", let other):
                    Issue.record("a publish to the broken topic: \(other)")
                case (_, .failure(let error)):
                    Issue.record("a publish to \(topic) failed: \(error)")
                case (_, .success):
                    break
                }
            }
            let fine = outcomes.filter { $0.0 != "broken" }.compactMap { try? $0.1.get() }
            #expect(fine.count == 40)
            #expect(try await redis.run(["HGET", "sse:{fine0}:id", "events"]).integer == 20)
            #expect(try await redis.run(["GET", "sse:{broken}:id"]).string == "not a hash")
        }
    }

    /// A publish whose deadline passed before its batch was sent is refused, and nothing of it reaches Redis.
    @Test func aPublishPastItsDeadlineIsNotSent() async throws {
        try await withBatcher { redis, batcher, constants async throws in
            let item = ClusterEngine.publishItem(topic: "late", channel: .events, data: "v", event: nil, above: 0, sharded: false,
                                                 database: 0)
            let late = await batcher.publish(item, constants: constants, hash: nil, until: PublishDeadline(.now - .milliseconds(1)),
                                             timeout: .seconds(2))
            guard case .failure(.refused(let reason)) = late else {
                Issue.record("a publish past its deadline: \(late)")
                return
            }
            #expect(reason.contains("nothing was stored"))
            #expect(try await redis.run(["EXISTS", "sse:{late}:id"]).integer == 0)
            // The batcher is free again: the next publish goes out.
            let next = await batcher.publish(item, constants: constants, hash: nil, until: .after(.seconds(2)), timeout: .seconds(2))
            #expect(try next.get().0 == 1)
        }
    }

    /// Publishes of a cancelled task (a client that went away, an HTTP/2 stream reset) in
    /// one batch: each is still sent, stored and answered with its id; the leader's
    /// cancellation does not refuse the others.
    @Test func aCancelledLeaderStillSendsItsBatch() async throws {
        try await withBatcher { redis, batcher, constants async throws in
            let cancelled = Task {
                await withTaskGroup(of: PublishOutcome.self) { group in
                    for index in 0..<5 {
                        let item = ClusterEngine.publishItem(topic: "gone", channel: .events, data: "v\(index)", event: nil,
                                                             above: 0, sharded: false, database: 0)
                        group.addTask {
                            await batcher.publish(item, constants: constants, hash: nil, until: .after(.seconds(2)), timeout: .seconds(2))
                        }
                    }
                    return await group.reduce(into: [PublishOutcome]()) { $0.append($1) }
                }
            }
            cancelled.cancel()
            let outcomes = await cancelled.value
            #expect(outcomes.compactMap { try? $0.get().0 }.sorted() == [1, 2, 3, 4, 5], "\(outcomes)")
            #expect(try await redis.run(["XLEN", "sse:{gone}:events"]).integer == 5)
        }
    }

    /// A batcher on its own connection to a fresh Redis, with a gateway's constants for it
    /// and the epoch a gateway's link seeds (the publish script refuses without it).
    private func withBatcher(_ body: (RedisServer, PublishBatcher, RedisArguments) async throws -> Void) async throws {
        let redis = try await RedisServer.start()
        try await stoppingAfterwards({ await redis.stop() }) {
            _ = try await redis.run(["SET", ShardKeys.global.epoch, "test"])
            let connection = try await RedisConnection.connect(to: try RedisURL(parsing: redis.url), timeout: .seconds(2))
            defer { connection.close() }
            let constants = ClusterEngine.publishConstants(configuration: ClusterConfiguration(redis: try RedisEndpoint(parsing: redis.url)),
                                                           gatewayID: "test", shardKeys: .global, epoch: "test", sharded: false)
            try await body(redis, PublishBatcher(connection: connection), constants)
        }
    }
}
