import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// `--redis-min-replicas` when the replica falls silent (SIGSTOP): the publishes in
/// flight are refused quickly instead of queueing behind each other's `WAIT`, the link
/// stays up (no reconnect), and the command connection is held by nothing.
@Suite(.timeLimit(.minutes(1)))
struct MinReplicasEngineTests {
    /// Publishes `data` to `topic` until one is confirmed (a refused try waits 100 ms),
    /// for at most 10 s: its id, or nil.
    private static func publishUntilConfirmed(_ running: RunningEngine, _ topic: String,
                                              _ data: String) async throws -> UInt64? {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let id = try? await running.publish(topic, .events, data).id { return id }
            try await Task.sleep(for: .milliseconds(100))
        }
        return nil
    }

    @Test func aSilentReplicaRefusesPublishesQuicklyAndHoldsNothingElse() async throws {
        let master = try await RedisServer.start()
        let replica = try await RedisServer.start(["--replicaof", "127.0.0.1", String(master.port)])
        defer { Task { await replica.stop(); await master.stop() } }
        let deadline = ContinuousClock.now + .seconds(10)
        while !(try await replica.run(["INFO", "replication"]).string ?? "").contains("master_link_status:up") {
            #expect(ContinuousClock.now < deadline)
            try await Task.sleep(for: .milliseconds(50))
        }
        let running = try RunningEngine(master.url) {
            $0.minReplicas = 1
            $0.commandTimeout = .milliseconds(750)
            $0.minReplicasTimeout = .milliseconds(500)
        }
        try await running.ready()
        let engine = running.engine
        // A first publish confirmed while the replica answers (on a loaded machine a first
        // WAIT may outlast its 500 ms: tried again, as after the pause below).
        let first = try await Self.publishUntilConfirmed(running, "safe", "a")
        #expect(first != nil, "a publish is confirmed while the replica answers")

        replica.pause()
        // 20 publishes at once: pipelined behind each other's WAIT they would take 20 × 500 ms
        // and time the link out; taking turns, the first waits out its WAIT, the rest are refused with it.
        let started = ContinuousClock.now
        // Each outcome: nil when acknowledged, else the refusal's own reason.
        let outcomes = await withTaskGroup(of: String?.self) { group in
            for index in 0..<20 {
                group.addTask {
                    do {
                        _ = try await running.publish("safe", .events, "b\(index)")
                        return nil
                    } catch PublishError.unavailable(let reason) {
                        return reason
                    } catch {
                        return "\(error)"
                    }
                }
            }
            var outcomes: [String?] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let took = ContinuousClock.now - started
        #expect(outcomes.allSatisfy { $0 != nil }, "every publish refused while the replica is silent")
        #expect(took < .milliseconds(1500), "refused within about one WAIT timeout, took \(took)")
        // Each refusal names the replicas it waited for: not confirmed within the WAIT, or (on
        // a loaded machine) its turn behind that WAIT outlasting the command timeout.
        #expect(outcomes.allSatisfy { $0?.contains("--redis-min-replicas") == true }, "\(outcomes.compactMap { $0 }.prefix(2))")
        #expect(outcomes.contains { $0?.contains("of the 1 replicas required") == true }, "\(outcomes.compactMap { $0 }.prefix(2))")
        // The command connection was held by nothing: a new subscription is served at once
        // (behind 20 pipelined WAITs it would wait 10 s; 1.5 s leaves a loaded machine room:
        // 568 ms was seen in the parallel pass on a slow day).
        let subscribing = ContinuousClock.now
        let stream = try await running.subscribe("other")
        #expect(ContinuousClock.now - subscribing < .milliseconds(1500))
        stream.cancel()
        // The link stayed up.
        #expect(engine.isReady)
        #expect(engine.metrics.first { $0.name == "sse_gateway_redis_reconnects_total" }?.value == 0)

        replica.resume()
        let acknowledged = try await Self.publishUntilConfirmed(running, "safe", "c")
        #expect((acknowledged ?? 0) > 1, "confirmed again once the replica answers")
        await running.stop()
    }

    /// A slow replica (paused 300 ms, then awake only until it has taken what the master
    /// sent, 5 ms on a quiet machine; each `WAIT` confirmed within its
    /// 600 ms): 40 publishes at once take turns, and each that waits past its command
    /// timeout (750 ms) is refused then (503), not after the turns of all before it
    /// (a few per pause).
    @Test func publishesWaitingTheirTurnEndByTheirDeadline() async throws {
        let master = try await RedisServer.start()
        let replica = try await RedisServer.start(["--replicaof", "127.0.0.1", String(master.port)])
        defer { Task { replica.resume(); await replica.stop(); await master.stop() } }
        let linked = ContinuousClock.now + .seconds(10)
        while !(try await replica.run(["INFO", "replication"]).string ?? "").contains("master_link_status:up") {
            #expect(ContinuousClock.now < linked)
            try await Task.sleep(for: .milliseconds(50))
        }
        let running = try RunningEngine(master.url) {
            $0.minReplicas = 1
            $0.commandTimeout = .milliseconds(750)
            $0.minReplicasTimeout = .milliseconds(600)
        }
        try await running.ready()
        let first = try await Self.publishUntilConfirmed(running, "slow", "a")
        #expect(first != nil, "confirmed before the replica is slowed")
        let slowing = Task {
            while !Task.isCancelled {
                replica.pause()
                try? await Task.sleep(for: .milliseconds(300))
                // Awake until it has taken what the master sent (its ack to a WAIT included),
                // at least 5 ms and at most 200: on a loaded machine a fixed 5 ms could pass
                // before the replica is even scheduled, and nothing would be confirmed.
                let sent = (try? await master.replicationOffset(of: "master_repl_offset")) ?? 0
                replica.resume()
                let awake = ContinuousClock.now
                try? await Task.sleep(for: .milliseconds(5))
                while !Task.isCancelled, ContinuousClock.now < awake + .milliseconds(200),
                      ((try? await replica.replicationOffset(of: "slave_repl_offset")) ?? 0) < sent {
                    try? await Task.sleep(for: .milliseconds(2))
                }
            }
        }
        let started = ContinuousClock.now
        let outcomes = await withTaskGroup(of: (Bool, Duration).self) { group in
            for index in 0..<40 {
                group.addTask {
                    let start = ContinuousClock.now
                    let ok = (try? await running.publish("slow", .events, "b\(index)")) != nil
                    return (ok, ContinuousClock.now - start)
                }
            }
            var outcomes: [(Bool, Duration)] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        let took = ContinuousClock.now - started
        slowing.cancel()
        await slowing.value
        replica.resume()
        let longest = outcomes.map(\.1).max() ?? .zero
        print("min replicas, slow replica: \(outcomes.filter(\.0).count) of 40 publishes confirmed, the longest waited \(longest)")
        // The command timeout + one WAIT's + a margin for a loaded machine.
        #expect(longest < .milliseconds(2000), "a publish waited \(longest) (all took \(took))")
        #expect(outcomes.contains { $0.0 }, "some publishes were confirmed by the slow replica")
        #expect(outcomes.contains { !$0.0 }, "those past their deadline were refused (all took \(took))")
        await running.stop()
    }

    /// Redis's `timeout` (2 s here; managed services often set 300 s) closes idle clients: the
    /// publishing connection of its own, idle without publishes, is kept busy by the heartbeat,
    /// so the link is not torn down and made again every few seconds.
    @Test func anIdlePublishingConnectionOutlivesRedisTimeout() async throws {
        let master = try await RedisServer.start()
        let replica = try await RedisServer.start(["--replicaof", "127.0.0.1", String(master.port)])
        defer { Task { await replica.stop(); await master.stop() } }
        let running = try RunningEngine(master.url) { $0.minReplicas = 1 }
        defer { Task { await running.stop() } }
        try await running.ready()
        _ = try await master.run(["CONFIG", "SET", "timeout", "2"])
        func reconnects() -> UInt64 {
            running.engine.metrics.first { $0.name == "sse_gateway_redis_reconnects_total" }?.value ?? 0
        }
        try await Task.sleep(for: .seconds(7))
        #expect(reconnects() == 0, "the link was made again \(reconnects()) times while idle")
        #expect(running.engine.isReady)
    }
}

extension RedisServer {
    /// A number field of `INFO replication` (`master_repl_offset`, `slave_repl_offset`).
    func replicationOffset(of field: String) async throws -> Int {
        let info = try await run(["INFO", "replication"]).string ?? ""
        let line = info.split(whereSeparator: \.isNewline).first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.dropFirst(field.count + 1)) } ?? 0
    }

}
