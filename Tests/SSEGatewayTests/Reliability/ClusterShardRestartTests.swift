import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// One Redis Cluster master restarting empty, alone.
    @Suite struct ClusterShardRestart {
        /// Three masters without replicas (`cluster-require-full-coverage no`), two gateways, a topic
        /// on the master that restarts and one on another, each with subscribers on both gateways.
        /// The master is killed and started again with its data gone (its `nodes.conf` kept, so it
        /// rejoins with its slots) while A publishes to both topics every 20 ms: every publish to the
        /// other master's topic is acknowledged throughout, those to the restarted one's are refused
        /// (503) only while it is away and for the pause after it came back empty (3 s), and its ids
        /// go on past every id acknowledged before (never backwards); every stream gets every
        /// acknowledged id of its topic once, in order (or in a `gap`).
        @Test func oneShardRestartingEmptyLeavesTheOthersServedAndItsIdsGoOn() async throws {
            let cluster = try await RedisCluster.start(masters: 3, replicasPerMaster: 0)
            let arguments = ["--redis", cluster.url, "--replay-count", "4096"]
            let a = try await GatewayProcess.start(arguments)
            let b = try await GatewayProcess.start(arguments)
            defer { Task { await a.child.stop(); await b.child.stop(); _ = cluster } }
            for gateway in [a, b] {
                #expect(try await eventually(within: 15) { try await gateway.send("GET", "/readyz").status == 200 })
            }
            let masters = try await cluster.topology().filter { $0.isMaster && !$0.slots.isEmpty }
            let victim = try #require(cluster.server(port: masters[0].port))
            let restarting = try await ClusterGateways.topics(servedBy: masters[0].port, count: 1, in: cluster, prefix: "empty")[0]
            let kept = try await ClusterGateways.topics(servedBy: masters[1].port, count: 1, in: cluster, prefix: "kept")[0]
            var streams: [(topic: String, stream: FailoverStream)] = []
            for topic in [restarting, kept] {
                for gateway in [a, b] { streams.append((topic, try await FailoverStream.open(port: gateway.port, target: "/events/\(topic)"))) }
            }
            defer { streams.forEach { $0.stream.close() } }

            var outcomes: [(topic: String, id: UInt64?, data: String, status: Int, sent: ContinuousClock.Instant)] = []
            func publishBoth(_ index: Int) async throws {
                for topic in [restarting, kept] {
                    let now = ContinuousClock.now
                    let data = "\(topic)-\(index)"
                    let reply = try await a.post("/events/\(topic)", data)
                    outcomes.append((topic, reply.status == 200 ? KeepAlivePublisher.id(in: reply.body) : nil, data, reply.status, now))
                }
            }
            for index in 0..<10 {
                try await publishBoth(index)
                try await Task.sleep(for: .milliseconds(20))
            }
            let before = outcomes.filter { $0.topic == restarting && $0.status == 200 }.compactMap(\.id).max() ?? 0
            #expect(before == 10)

            await victim.kill()
            // Its data gone, its cluster identity (nodes.conf) kept.
            for name in (try? FileManager.default.contentsOfDirectory(atPath: victim.directory)) ?? [] where name != "nodes.conf" {
                try? FileManager.default.removeItem(atPath: victim.directory + "/" + name)
            }
            let killedAt = ContinuousClock.now
            var restartedAt: ContinuousClock.Instant?
            var index = 10
            while index < 1_000 {
                if restartedAt == nil, ContinuousClock.now - killedAt > .seconds(1) {
                    try await victim.start(again: true)
                    restartedAt = ContinuousClock.now
                }
                try await publishBoth(index)
                index += 1
                if let restartedAt, ContinuousClock.now - restartedAt > .seconds(5),
                   outcomes.suffix(20).allSatisfy({ $0.status == 200 }) { break }
                try await Task.sleep(for: .milliseconds(20))
            }
            let restarted = try #require(restartedAt)
            let after = outcomes.filter { $0.topic == restarting && $0.status == 200 && $0.sent > killedAt }
            let lastRefused = outcomes.last { $0.topic == restarting && $0.status != 200 }?.sent
            Soak.report("redis cluster, one master restarted empty: its topic refused until "
                        + "\(lastRefused.map { secondsText($0 - restarted) } ?? "never") after the restart; "
                        + "\(after.count) acknowledged after it")
            let refusedKept = outcomes.filter { $0.topic == kept && $0.status != 200 }
            #expect(refusedKept.isEmpty, "\(refusedKept.count) publishes to the other master's topic refused, e.g. status \(refusedKept.first?.status ?? 0)")
            #expect(outcomes.allSatisfy { $0.status == 200 || $0.status == 503 })
            #expect(!after.isEmpty, "nothing acknowledged on the restarted master")
            #expect(after.allSatisfy { ($0.id ?? 0) > before }, "ids went backwards: \(after.prefix(3).map { $0.id ?? 0 }) after \(before)")
            for topic in [restarting, kept] {
                let ids = outcomes.filter { $0.topic == topic && $0.status == 200 }.compactMap(\.id)
                #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "\(topic): acknowledged ids not increasing")
            }
            for (topic, stream) in streams {
                let acknowledged = outcomes.filter { $0.topic == topic && $0.status == 200 }
                let highest = acknowledged.compactMap(\.id).max() ?? 0
                #expect(try await stream.read(through: highest, within: 10), "\(topic): a stream stopped at \(stream.last) of \(highest)")
                let missing = acknowledged.filter { !stream.has($0.id ?? 0, $0.data) }
                #expect(missing.isEmpty, "\(topic): a stream lacks \(missing.count) acknowledged values, e.g. \(missing.first.map { "\($0.id ?? 0)" } ?? "")")
                #expect(stream.problem == nil, "\(topic): \(stream.problem ?? "")")
            }
        }
    }
}
