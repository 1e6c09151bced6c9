import HTTPCore
import Locking
import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// A cluster engine running against a test Redis until stopped, on the event
/// loop's executor as in the gateway.
final class RunningEngine: Sendable {
    let engine: ClusterEngine
    private let task: Task<Void, Never>

    init(_ url: String, _ configure: (inout ClusterConfiguration) -> Void = { _ in }) throws {
        var configuration = ClusterConfiguration(redis: try RedisEndpoint(parsing: url))
        configuration.connectTimeout = .milliseconds(500)
        // A loaded test machine must not look like a stalled Redis: a killed one is
        // noticed at once anyway (the connection closes).
        configuration.commandTimeout = .seconds(5)
        configure(&configuration)
        let engine = ClusterEngine(configuration: configuration, executor: EventLoop.shared.actorExecutor)
        self.engine = engine
        task = Task(executorPreference: EventLoop.shared) { await engine.run() }
    }

    /// Waits until the engine's link is up.
    func ready(within seconds: Double = 10) async throws {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while !engine.isReady {
            guard ContinuousClock.now < deadline else { throw TimedOut(what: "engine ready") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    func stop() async {
        await engine.shutdown()
        await task.value
    }

    func publish(_ topic: String, _ channel: Channel = .events, _ value: String, event: String? = nil) async throws -> PublishResult {
        try await engine.publish(topic: topic, channel: channel, data: value, event: event)
    }

    /// Publishes `value`, tried again every `interval` while the gateway refuses it (Redis
    /// down, the pause while ids are restored), for up to 10 s: its id, nil if never taken.
    func publishOnceTaken(_ topic: String, _ value: String, every interval: Duration = .milliseconds(100)) async throws -> UInt64? {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let id = try? await publish(topic, .events, value).id { return id }
            try await Task.sleep(for: interval)
        }
        return nil
    }

    func subscribe(_ topic: String, _ channel: Channel = .events, after lastEventID: UInt64? = nil) async throws -> Subscription {
        try await engine.subscribe(topic: topic, channel: channel, lastEventID: lastEventID)
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// Starts engines on one fresh Redis, runs `body`, and stops them all.
func withCluster(engines count: Int = 2, _ configure: @escaping (inout ClusterConfiguration) -> Void = { _ in },
                 _ body: (RedisServer, [RunningEngine]) async throws -> Void) async throws {
    let redis = try await RedisServer.start()
    let engines = try (0..<count).map { _ in try RunningEngine(redis.url, configure) }
    try await stoppingAfterwards({
        for engine in engines { await engine.stop() }
        await redis.stop()
    }) {
        for engine in engines { try await engine.ready() }
        try await body(redis, engines)
    }
}

/// Runs `body`, then `stop` whether it threw or not (what a test started is stopped either way).
func stoppingAfterwards(_ stop: () async -> Void, _ body: () async throws -> Void) async throws {
    do {
        try await body()
    } catch {
        await stop()
        throw error
    }
    await stop()
}

extension Subscription {
    /// Reads until `count` events arrived, or throws `TimedOut` after `seconds`
    /// (the subscription is cancelled then).
    func events(_ count: Int, within seconds: Double = 10) async throws -> [SSEEvent] {
        try await withThrowingTaskGroup(of: [SSEEvent]?.self) { group in
            group.addTask {
                var parser = SSEParser()
                var events: [SSEEvent] = []
                while events.count < count, let batch = await self.nextBatch() {
                    for frame in batch { events += try parser.feed(frame) }
                }
                return events
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let events = first else { throw TimedOut(what: "\(count) events") }
            return events
        }
    }
}

extension SSEEvent {
    var number: UInt64? { id.flatMap(UInt64.init) }
}

/// Publishes as a gateway would, but straight from a test's own connection (a
/// publisher elsewhere in the cluster, while the engines under test are away).
func publishDirectly(to url: String, topic: String, _ values: [String], configuration: ClusterConfiguration) async throws -> [UInt64] {
    let connection = try await RedisConnection.connect(to: try RedisURL(parsing: url), timeout: .seconds(2))
    defer { connection.close() }
    // The epoch as a gateway's link finds it (the script refuses another).
    let epoch = try await connection.command(["GET", ShardKeys.global.epoch], timeout: .seconds(2)).string
    let constants = ClusterEngine.publishConstants(configuration: configuration, gatewayID: "test", shardKeys: .global,
                                                   epoch: epoch, sharded: false)
    var ids: [UInt64] = []
    for value in values {
        var command = RedisArguments(["EVAL", ClusterScripts.publish])
        let item = ClusterEngine.publishItem(topic: topic, channel: .events, data: value, event: nil, above: 0, sharded: false,
                                             database: configuration.redis.database)
        command.append(contentsOf: ClusterEngine.publishBatchArguments([item], constants: constants))
        // Refused while publishes pause (a gateway that linked first found Redis restarted):
        // tried again, as a gateway's publisher would, for up to 10 s.
        let deadline = ContinuousClock.now + .seconds(10)
        ids.append(try await tryingWhilePaused(until: deadline) {
            UInt64(try await connection.command(command, timeout: .seconds(2)).array?.first?.integer ?? 0)
        })
    }
    return ids
}

extension RedisServer {
    /// One command on a connection of the test's own.
    func run(_ arguments: [String]) async throws -> RedisValue {
        let connection = try await RedisConnection.connect(to: try RedisURL(parsing: url), timeout: .seconds(2))
        defer { connection.close() }
        return try await connection.command(arguments, timeout: .seconds(2))
    }
}

/// `body`, run again every 50 ms while Redis refuses it for the pause (`REFLOOR`), until `deadline`.
private func tryingWhilePaused<T>(until deadline: ContinuousClock.Instant, _ body: () async throws -> T) async throws -> T {
    while true {
        do {
            return try await body()
        } catch RedisError.server(let message) where message.contains("REFLOOR") && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
    }
}
