import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// `/readyz` and a refused publish tell the truth under partitions of a real redis-server:
    /// ready only once the gateway's pub/sub is seen delivering, and each refusal its own reason.
    @Suite struct ReadinessTruth {
        /// B's pub/sub muted by the proxy (connections open, commands answered, pushed messages
        /// dropped, as in centrifugo#1189): `/readyz` turns 503 saying the probe did not come back;
        /// the gateway reconnects, and its new link, whose subscriptions are confirmed but deliver
        /// nothing, is never called ready (no 200 in 6 s of polling every 50 ms), publishes get 503.
        /// Unmuted, B is ready again within 5 s and its stream goes on in order.
        @Test func readyWaitsForAProbeToComeBack() async throws {
            let redis = try await RedisServer.start()
            defer { Task { await redis.stop() } }
            let proxy = try await LinkProxy.start(to: redis.port)
            defer { Task { await proxy.stop() } }
            let b = try await GatewayProcess.start(["--redis", proxy.url, "--loops", "2"])
            defer { Task { await b.child.stop() } }
            #expect(try await eventually(within: 10) { try await b.send("GET", "/readyz").status == 200 })
            let target = "/events/muted"
            let stream = try await FailoverStream.open(port: b.port, target: target)
            defer { stream.close() }
            let first = try await b.publish(target, "before")
            #expect(try await stream.read(through: first, within: 5))

            try await proxy.mute()
            let mutedAt = ContinuousClock.now
            var notReady: (at: ContinuousClock.Instant, text: String)?
            while notReady == nil, ContinuousClock.now < mutedAt + .seconds(10) {
                let reply = try await b.send("GET", "/readyz", within: 2)
                if reply.status == 503 { notReady = (.now, reply.text) }
                try await Task.sleep(for: .milliseconds(50))
            }
            // Three probes, a second apart, must be missing: 3 to 4 s, with room for a loaded machine.
            #expect(notReady.map { $0.at - mutedAt < .seconds(6) } ?? false,
                    "B not ready \(notReady.map { secondsText($0.at - mutedAt) } ?? "never") after its pub/sub went silent")
            #expect(notReady?.text.contains("probe") ?? false, "\(notReady?.text ?? "")")
            // Long enough for two reconnects (the probe is given up after 3 s).
            var readyWhileMuted = 0
            var polls = 0
            let watchUntil = ContinuousClock.now + .seconds(6)
            while ContinuousClock.now < watchUntil {
                if try await b.send("GET", "/readyz", within: 2).status == 200 { readyWhileMuted += 1 }
                polls += 1
                try await Task.sleep(for: .milliseconds(50))
            }
            let refused = try await b.post(target, "while muted")
            let reconnects = try await b.metrics()["sse_gateway_redis_reconnects_total"] ?? 0
            #expect(readyWhileMuted == 0, "/readyz said 200 \(readyWhileMuted) times of \(polls) while B's pub/sub delivered nothing")
            #expect(reconnects >= 1, "B never reconnected while muted: the check above proved nothing")
            #expect(refused.status == 503 && refused.head.headers["Retry-After"] != nil, "\(refused.status) \(refused.text)")

            try await proxy.restore()
            let restoredAt = ContinuousClock.now
            #expect(try await eventually(within: 5) { try await b.send("GET", "/readyz").status == 200 },
                    "B not ready within 5 s of its pub/sub delivering again")
            Soak.report("muted pub/sub: B not ready \(notReady.map { secondsText($0.at - mutedAt) } ?? "never") after the mute, "
                        + "\(Int(reconnects)) reconnects meanwhile, ready again \(secondsText(ContinuousClock.now - restoredAt)) after")
            let next = try await b.publish(target, "after")
            #expect(try await stream.read(through: next, within: 10))
            #expect(stream.problem == nil, "\(stream.problem ?? "")")
            #expect(!stream.stream.ended)
        }

        /// A silent Redis (SIGSTOP) then SIGCONT: the first `/readyz` 200 afterwards means served — a
        /// publish made right then is acknowledged and reaches a stream opened before the partition.
        @Test func readyAfterASilentRedisMeansServed() async throws {
            let redis = try await RedisServer.start()
            defer { Task { await redis.stop() } }
            let b = try await GatewayProcess.start(["--redis", redis.url, "--loops", "2"])
            defer { Task { await b.child.stop() } }
            #expect(try await eventually(within: 10) { try await b.send("GET", "/readyz").status == 200 })
            let target = "/events/stopped"
            let stream = try await FailoverStream.open(port: b.port, target: target)
            defer { stream.close() }
            _ = try await b.publish(target, "before")

            redis.pause()
            #expect(try await eventually(within: 5) { try await b.send("GET", "/readyz", within: 2).status == 503 })
            try await Task.sleep(for: .seconds(4))  // The probe given up, reconnects failing.
            redis.resume()
            let resumedAt = ContinuousClock.now
            var readyAt: ContinuousClock.Instant?
            while readyAt == nil, ContinuousClock.now < resumedAt + .seconds(10) {
                if try await b.send("GET", "/readyz", within: 2).status == 200 { readyAt = .now }
            }
            #expect(readyAt != nil, "B not ready within 10 s of SIGCONT")
            let reply = try await b.post(target, "at once")
            #expect(reply.status == 200, "ready, but the publish right after got \(reply.status): \(reply.text)")
            let id = KeepAlivePublisher.id(in: reply.body) ?? 0
            #expect(try await stream.read(through: id, within: 2), "the stream did not get the publish within 2 s")
            #expect(stream.problem == nil, "\(stream.problem ?? "")")
        }

        /// Concurrent publishes refused for different reasons each get their own in the 503: Redis
        /// refuses a publish to a topic whose id key has the wrong type ("WRONGTYPE") and one to a
        /// topic whose counter is at its largest ("overflow"); 10 publishers of each at once, on two
        /// event loops, up to 200 each within 2 s. (The reasons once shared one field, which each refusal overwrote.)
        @Test func concurrentRefusalsEachSayTheirOwnReason() async throws {
            let redis = try await RedisServer.start()
            defer { Task { await redis.stop() } }
            let b = try await GatewayProcess.start(["--redis", redis.url, "--loops", "2"])
            defer { Task { await b.child.stop() } }
            #expect(try await eventually(within: 10) { try await b.send("GET", "/readyz").status == 200 })
            _ = await RedisCLI.run(port: redis.port, ["SET", "sse:{broken}:id", "not a hash"])
            _ = await RedisCLI.run(port: redis.port, ["HSET", "sse:{full}:id", "events", String(Int64.max)])

            let until = ContinuousClock.now + .seconds(2)
            let replies: [(topic: String, status: Int, text: String)] = try await withThrowingTaskGroup(
                of: [(String, Int, String)].self
            ) { group in
                for index in 0..<20 {
                    let topic = index % 2 == 0 ? "broken" : "full"
                    group.addTask {
                        var replies: [(String, Int, String)] = []
                        for _ in 0..<200 where ContinuousClock.now < until {
                            let reply = try await b.send("POST", "/events/\(topic)", body: Array("x".utf8), within: 5)
                            replies.append((topic, reply.status, reply.text))
                        }
                        return replies
                    }
                }
                var all: [(topic: String, status: Int, text: String)] = []
                for try await some in group { all += some.map { ($0.0, $0.1, $0.2) } }
                return all
            }
            let wrong = replies.filter { reply in
                reply.status != 503 || !reply.text.contains(reply.topic == "broken" ? "WRONGTYPE" : "overflow")
            }
            let counts = (broken: replies.filter { $0.topic == "broken" }.count, full: replies.filter { $0.topic == "full" }.count)
            #expect(counts.broken >= 20 && counts.full >= 20, "too few publishes to race: \(counts)")
            #expect(wrong.isEmpty, "\(wrong.count) of \(replies.count) refusals gave another's reason, e.g. \(wrong.prefix(3).map { "\($0.topic): \($0.status) \($0.text)" })")
        }
    }
}
