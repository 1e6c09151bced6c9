import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// A Redis Cluster failover where the promoted replica lacks the last writes (ids
    /// go on past every id a subscriber saw), and the gateways do not all reach it at once.
    @Suite struct ClusterLateGateway {
        /// Two gateways: B has a subscriber of topic T, A has none (A only publishes to it). The
        /// replica of T's master is cut off (stopped, its replication link killed) so it lacks
        /// ids 6–10 of T, which B's subscriber has seen; B is stopped (SIGSTOP), the replica takes
        /// over (`CLUSTER FAILOVER TAKEOVER`), and A publishes to T every 20 ms while B is away;
        /// B comes back 2 s after its last heartbeat (its liveness, replicated to the new master,
        /// still live). A's publishes pause until B has raised T's counter on the new master: no
        /// acknowledged id is 10 or below (a fixed pause ended before B came back, and A's
        /// publishes took ids 6–10 again, which B's subscriber then silently skipped), and B's
        /// subscriber gets every acknowledged id once, in order, with its value; a client resuming
        /// on B after id 10 gets exactly those. B stopped longer
        /// than its liveness would not be waited for (the pause's bound, README).
        @Test func lateGatewayAfterFailoverSkipsNothing() async throws {
            let cluster = try await RedisCluster.start()
            let arguments = ["--redis", cluster.url, "--replay-count", "4096"]
            let a = try await GatewayProcess.start(arguments)
            let b = try await GatewayProcess.start(arguments)
            var bStopped = false
            defer {
                if bStopped { b.child.send(SIGCONT) }
                Task { await a.child.stop(); await b.child.stop(); _ = cluster }
            }
            for gateway in [a, b] {
                #expect(try await eventually(within: 15) { try await gateway.send("GET", "/readyz").status == 200 })
            }
            let topology = try await cluster.topology()
            let victim = try #require(topology.first { $0.isMaster && !$0.slots.isEmpty })
            let replicaInfo = try #require(topology.first { $0.masterID == victim.id })
            let replica = try #require(cluster.server(port: replicaInfo.port))
            let topic = try #require(try await ClusterGateways.topics(servedBy: victim.port, count: 1, in: cluster, prefix: "late").first)
            let target = "/events/\(topic)"
            let onB = try await FailoverStream.open(port: b.port, target: target)
            defer { onB.close() }
            for index in 1...5 { _ = try await a.publish(target, "replicated\(index)") }
            #expect(try await onB.read(through: 5, within: 10))
            // (A cluster replica answers reads with MOVED: its acknowledged offset says it holds them.
            // The master's offset as the five were acknowledged: the replica's, acknowledged once a
            // second, must reach it; the master's own goes on with every heartbeat meanwhile.)
            func offsets(_ info: String) -> (master: Int, replicas: [Int]) {
                let lines = info.split(whereSeparator: \.isNewline)
                let master = lines.first { $0.hasPrefix("master_repl_offset:") }
                    .flatMap { $0.split(separator: ":").last.flatMap { Int($0) } } ?? Int.max
                let replicas = lines.filter { $0.hasPrefix("slave") }.compactMap { line in
                    line.split(separator: ",").first { $0.hasPrefix("offset=") }.flatMap { Int($0.dropFirst("offset=".count)) }
                }
                return (master, replicas)
            }
            let written = offsets(await RedisCLI.run(port: victim.port, ["INFO", "replication"])).master
            #expect(try await eventually(within: 10) {
                offsets(await RedisCLI.run(port: victim.port, ["INFO", "replication"])).replicas.contains { $0 >= written }
            }, "the replica never held the first five")

            // B's liveness key on the victim, just refreshed (B's id: the one counting T's subscriber).
            let counted = try #require(try await eventuallyValue(within: 10, {
                let id = await RedisCLI.run(port: victim.port, ["HKEYS", "sse:{\(topic)}:n:events"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return id.isEmpty ? nil : id
            }, until: { !$0.contains("\n") }), "B never counted its subscriber")
            let livenessKey = try #require(try await eventuallyValue(within: 5, {
                let keys = await RedisCLI.run(port: victim.port, ["KEYS", "sse:{s*}:gw:\(counted)"])
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                return keys.isEmpty ? nil : keys
            }, until: { !$0.contains("\n") }), "no liveness key of B on the victim")
            var fresh = false
            for _ in 0..<200 where !fresh {
                let left = await RedisCLI.run(port: victim.port, ["PTTL", livenessKey])
                fresh = Int(left.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 2_800
            }
            try #require(fresh, "B's liveness was never seen just refreshed")
            let freshAt = ContinuousClock.now

            // The replica stops getting writes: stopped, then unlinked by the master.
            replica.pause()
            _ = await RedisCLI.run(port: victim.port, ["CLIENT", "KILL", "TYPE", "replica"])
            #expect(await RedisCLI.run(port: victim.port, ["INFO", "replication"]).contains("connected_slaves:0"),
                    "the replica could not be unlinked")
            for index in 6...10 { _ = try await a.publish(target, "unreplicated\(index)") }
            #expect(try await onB.read(through: 10, within: 5))
            b.child.send(SIGSTOP)
            bStopped = true
            // The takeover is sent while the replica is stopped: it runs before the replica
            // could link to its master again (and get ids 6–10).
            async let takeover = RedisCLI.run(port: replica.port, ["CLUSTER", "FAILOVER", "TAKEOVER"])
            try await Task.sleep(for: .milliseconds(150))
            replica.resume()
            #expect(await takeover.contains("OK"), "the takeover was refused")
            #expect(try await eventually(within: 5) {
                await RedisCLI.run(port: replica.port, ["ROLE"]).hasPrefix("master")
            }, "the replica was not promoted")
            let promoted = ContinuousClock.now
            #expect(await RedisCLI.run(port: replica.port, ["XLEN", "sse:{\(topic)}:events"])
                .trimmingCharacters(in: .whitespacesAndNewlines) == "5", "the promoted replica was not behind")

            // A publishes every 20 ms; B comes back 2 s after its last heartbeat (its liveness lives 3 s).
            var outcomes: [(id: UInt64?, data: String, status: Int, sent: ContinuousClock.Instant)] = []
            var resumedAt: ContinuousClock.Instant?
            for index in 0..<250 {
                let now = ContinuousClock.now
                if resumedAt == nil, now >= freshAt + .seconds(2) {
                    b.child.send(SIGCONT)
                    bStopped = false
                    resumedAt = now
                }
                if let resumedAt, now > resumedAt + .seconds(2), outcomes.contains(where: { $0.status == 200 && $0.sent > resumedAt }) {
                    break
                }
                let data = "after\(index)"
                let reply = try await a.post(target, data)
                outcomes.append((reply.status == 200 ? KeepAlivePublisher.id(in: reply.body) : nil, data, reply.status, now))
                try await Task.sleep(for: .milliseconds(20))
            }
            let acknowledged = outcomes.filter { $0.status == 200 }
            let lastRefused = outcomes.last { $0.status != 200 }?.sent
            Soak.report("redis cluster, late gateway: B back \(resumedAt.map { secondsText($0 - promoted) } ?? "never") after the "
                        + "promotion; A refused \(outcomes.count - acknowledged.count), the last "
                        + "\(lastRefused.map { secondsText($0 - promoted) } ?? "none") after it; \(acknowledged.count) acknowledged")
            #expect(resumedAt != nil, "B was never resumed")
            #expect(!acknowledged.isEmpty, "A never published again")
            #expect(outcomes.allSatisfy { $0.status == 200 || $0.status == 503 })
            let reused = acknowledged.filter { ($0.id ?? 0) <= 10 }
            #expect(reused.isEmpty, "A's publishes were given ids B's subscriber had already seen: \(reused.map { $0.id ?? 0 })")
            let highest = acknowledged.compactMap(\.id).max() ?? 0
            #expect(try await onB.read(through: highest, within: 10))
            let missing = acknowledged.filter { !onB.has($0.id ?? 0, $0.data) }
            #expect(missing.isEmpty, "B's subscriber never got \(missing.count) acknowledged values, e.g. \(missing.prefix(3).map { "\($0.id ?? 0) \($0.data)" })")
            #expect(onB.problem == nil, "\(onB.problem ?? "")")
            #expect(!onB.stream.ended)
            // A client resuming on B from the last id it saw before the failover is not sent back.
            let resumed = try await FailoverStream.open(port: b.port, target: target, headers: [("Last-Event-ID", "10")])
            defer { resumed.close() }
            #expect(try await resumed.read(through: highest, within: 10))
            #expect(resumed.received.keys.min() == acknowledged.compactMap(\.id).min(),
                    "resumed after 10 but got \(resumed.received.keys.sorted().prefix(5))")
        }
    }
}
