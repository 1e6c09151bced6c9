import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// Gateways (the real executable) on `redis+sentinel://`: a master, two replicas and
    /// three sentinels; the master SIGKILLed under steady publishing.
    @Suite struct SentinelFailover {
        static let subscribers = Soak.isOn ? 1_000 : 300

        /// One POST's outcome, as the publisher saw it.
        struct Outcome {
            /// 0: A (acknowledged by the master), 1: B (by a replica too).
            let gateway: Int
            let sent: ContinuousClock.Instant
            let answered: ContinuousClock.Instant
            let status: Int
            let id: UInt64?
            let data: String
            let body: String
        }

        /// The master SIGKILLed while two gateways publish a value every 20 ms alternately and 300
        /// subscribers read; A acknowledges once the master holds a value, B (`--redis-min-replicas 1`)
        /// once a replica does too. Every POST is answered within 2 s; A's get 503 only until the
        /// promotion plus 2 s (or, once more, for the pause a gateway arriving later at the new
        /// master starts, within 5 s), B's until a replica of the new master confirms (within 10 s), then 200
        /// again; acknowledged ids only go up; every stream stays open and gets every acknowledged id
        /// once, in order (or a `gap`); none of B's acknowledged values is missing from the new master's
        /// window; both gateways count the failover. Then the old master comes back and Sentinel makes
        /// it a replica of the new one, and publishes go on.
        @Test func masterKilledUnderSteadyPublishing() async throws {
            let set = try await SentinelSet.start(replicas: 2)
            defer { Task { await set.stop() } }
            let arguments = ["--redis", set.url, "--replay-count", "4096"]
            let a = try await GatewayProcess.start(arguments)
            let b = try await GatewayProcess.start(arguments + ["--redis-min-replicas", "1"])
            defer { Task { await a.child.stop(); await b.child.stop() } }
            let gateways = [a, b]
            for gateway in gateways {
                #expect(try await eventually(within: 10) { try await gateway.send("GET", "/readyz").status == 200 })
            }
            let target = "/events/failover"

            // Each subscriber opens and reads in its own task until told the final id and the
            // acknowledged values, then checks it has every one of them.
            let opened = SharedValue(0)
            let finalID = SharedValue<UInt64?>(nil)
            let acknowledgedValues = SharedValue<[UInt64: String]>([:])
            let subscribers = Self.subscribers
            async let readers: [String] = withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<subscribers {
                    group.addTask {
                        let stream = try await FailoverStream.open(port: gateways[index % 2].port, target: target)
                        defer { stream.close() }
                        opened.update { $0 += 1 }
                        while finalID.value == nil {
                            _ = try await stream.read(through: stream.last + 1, within: 0.5)
                            if stream.stream.ended { return "stream \(index) ended at \(stream.last)" }
                        }
                        guard try await stream.read(through: finalID.value!, within: 30) else {
                            return "stream \(index) stopped at \(stream.last) (final \(finalID.value!))"
                        }
                        if let problem = stream.problem { return "stream \(index): \(problem)" }
                        let missing = acknowledgedValues.value.filter { !stream.has($0.key, $0.value) }
                        if let first = missing.keys.min() {
                            return "stream \(index) lacks \(missing.count) acknowledged values, the first \(first)"
                        }
                        return nil
                    }
                }
                var problems: [String] = []
                for try await problem in group { if let problem { problems.append(problem) } }
                return problems
            }
            let openDeadline = ContinuousClock.now + .seconds(60)
            while opened.value < subscribers, ContinuousClock.now < openDeadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(opened.value == subscribers)

            let promotedAt = SharedValue<ContinuousClock.Instant?>(nil)
            async let outcomes: [Outcome] = {
                var outcomes: [Outcome] = []
                var index = 0
                // Until 4 s after the promotion, and B has had a publish acknowledged since.
                while index < 5_000 {
                    if let promoted = promotedAt.value, ContinuousClock.now > promoted + .seconds(4),
                       outcomes.contains(where: { $0.gateway == 1 && $0.status == 200 && $0.sent > promoted })
                        || ContinuousClock.now > promoted + .seconds(12) { break }
                    index += 1
                    let data = "v\(index)"
                    let sent = ContinuousClock.now
                    let reply = try? await gateways[index % 2].send("POST", target, body: Array(data.utf8), within: 5)
                    outcomes.append(Outcome(gateway: index % 2, sent: sent, answered: .now, status: reply?.status ?? 0,
                                            id: reply.flatMap { KeepAlivePublisher.id(in: $0.body) }, data: data,
                                            body: reply?.text ?? "no answer"))
                    try await Task.sleep(for: .milliseconds(20))
                }
                return outcomes
            }()

            try await Task.sleep(for: .milliseconds(1500))
            let oldPort = set.master.port
            await set.master.kill()
            let killedAt = ContinuousClock.now
            let newPort = try await set.waitForPromotion(from: oldPort)
            let promoted = ContinuousClock.now
            promotedAt.set(promoted)
            let published = try await outcomes
            let acknowledged = published.filter { $0.status == 200 }
            acknowledgedValues.set(Dictionary(acknowledged.map { ($0.id ?? 0, $0.data) }, uniquingKeysWith: { first, _ in first }))
            finalID.set(acknowledged.last?.id ?? 0)
            let problems = try await readers

            for gateway in 0...1 {
                let lastRefused = published.last { $0.gateway == gateway && $0.status != 200 }
                print("sentinel failover, gateway \(gateway == 0 ? "A" : "B"): the promotion \(promoted - killedAt) after the kill; "
                      + "\(published.filter { $0.gateway == gateway && $0.status != 200 }.count) POSTs refused, the last "
                      + (lastRefused.map { "\($0.sent - promoted) after the promotion" } ?? "none"))
            }
            #expect(newPort != oldPort)
            #expect(published.allSatisfy { $0.answered - $0.sent < .seconds(2) }, "a POST took 2 s or more")
            #expect(published.allSatisfy { $0.status == 200 || $0.status == 503 },
                    "\(published.first { $0.status != 200 && $0.status != 503 }.map { "\($0.status) \($0.body)" } ?? "")")
            // A's refusals end within 2 s of the promotion, but for the pause a later gateway may
            // start once more (README: B reaches the new master after A's pause ended and pauses
            // the shard again until its syncs and A's mark are done; each pause lasts 3 s at most).
            let late = published.filter { $0.gateway == 0 && $0.status != 200 && $0.sent > promoted + .seconds(2) }
            let notThePause = late.filter { !$0.body.contains("restore the ids") || $0.sent > promoted + .seconds(5) }
            #expect(notThePause.isEmpty, """
                \(notThePause.count) of A's publishes refused more than 2 s after the promotion other than by a \
                later gateway's pause, e.g. \(notThePause.first?.body ?? "")
                """)
            if let last = late.last { print("sentinel failover, gateway A: \(late.count) refused by a later pause, the last \(last.sent - promoted) after the promotion") }
            if !notThePause.isEmpty {
                for (name, gateway) in [("A", a), ("B", b)] {
                    print("gateway \(name)'s log:\n" + gateway.child.stderr.text.split(separator: "\n")
                        .filter { $0.contains("redis") }.suffix(30).joined(separator: "\n"))
                }
            }
            let lateOnB = published.filter { $0.gateway == 1 && $0.status != 200 && $0.sent > promoted + .seconds(10) }
            #expect(lateOnB.isEmpty, "\(lateOnB.count) of B's publishes refused more than 10 s after the promotion")
            for gateway in 0...1 {
                #expect(acknowledged.contains { $0.gateway == gateway && $0.sent > promoted },
                        "no publish acknowledged by gateway \(gateway) after the promotion")
            }
            let ids = acknowledged.compactMap(\.id)
            #expect(ids.count == acknowledged.count && zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 },
                    "acknowledged ids went backwards: \(ids)")
            #expect(problems.isEmpty, "\(problems.count) streams went wrong, e.g. \(problems.prefix(3))")

            // No acknowledged value is missing from the new master: a fresh subscriber replays the window.
            let replay = try await FailoverStream.open(port: a.port, target: target, headers: [("Last-Event-ID", "0")])
            defer { replay.close() }
            #expect(try await replay.read(through: ids.last ?? 0, within: 10))
            let lostValues = acknowledged.filter { $0.gateway == 1 && replay.received[$0.id ?? 0] != $0.data }
            #expect(lostValues.isEmpty, "\(lostValues.count) of B's acknowledged values lost, e.g. \(lostValues.first.map { "\($0.id ?? 0) \($0.data)" } ?? "")")
            for gateway in gateways {
                #expect(try await gateway.metrics()["sse_gateway_redis_failovers_total"] ?? 0 >= 1)
            }

            // The old master back: Sentinel turns it into a replica of the new one; publishes go on.
            try await set.master.start(again: true)
            #expect(try await eventually(within: 20) {
                await RedisCLI.run(port: oldPort, ["ROLE"]).hasPrefix("slave")
            }, "the old master did not become a replica")
            let next = try await a.publish(target, "after")
            #expect(next > (ids.last ?? 0))
            #expect(try await eventually(within: 10) {
                await RedisCLI.run(port: oldPort, ["HGET", "sse:{failover}:id", "events"])
                    .trimmingCharacters(in: .whitespacesAndNewlines) == String(next)
            }, "the old master does not replicate the new one")
        }

        /// The promoted replica lacks the last publishes (it was stopped while they were made, then
        /// the master was killed): the gateways' subscribers have seen ids the new master never had, so
        /// the counter goes on past them — the next publish gets the next id after the highest any
        /// subscriber saw, the open streams go on in order without a duplicate, and a client resuming
        /// from the last id it saw is not sent back. The first sentinel is killed beforehand: the
        /// gateways ask, and listen to, the next ones.
        @Test func idsNeverGoBackwardsWhenThePromotedReplicaLacksPublishes() async throws {
            let set = try await SentinelSet.start()
            defer { Task { await set.stop() } }
            let arguments = ["--redis", set.url, "--replay-count", "4096"]
            let a = try await GatewayProcess.start(arguments)
            let b = try await GatewayProcess.start(arguments)
            defer { Task { await a.child.stop(); await b.child.stop() } }
            for gateway in [a, b] {
                #expect(try await eventually(within: 10) { try await gateway.send("GET", "/readyz").status == 200 })
            }
            await set.sentinels[0].kill()
            let target = "/events/behind"
            let onA = try await FailoverStream.open(port: a.port, target: target)
            let onB = try await FailoverStream.open(port: b.port, target: target)
            defer { onA.close(); onB.close() }
            for index in 1...5 { _ = try await a.publish(target, "kept\(index)") }
            // Wait until the replica holds those five, then stop it and publish five more it will not get.
            #expect(try await eventually(within: 10) {
                await RedisCLI.run(port: set.replicas[0].port, ["HGET", "sse:{behind}:id", "events"])
                    .trimmingCharacters(in: .whitespacesAndNewlines) == "5"
            })
            // The replica stopped, then the master drops its link to it: what follows is never sent
            // (a stopped process still receives what was sent before; an unlinked one nothing more).
            set.replicas[0].pause()
            _ = await RedisCLI.run(port: set.master.port, ["CLIENT", "KILL", "TYPE", "replica"])
            #expect(await RedisCLI.run(port: set.master.port, ["INFO", "replication"]).contains("connected_slaves:0"),
                    "the replica could not be unlinked")
            var highest: UInt64 = 0
            for index in 1...5 { highest = try await b.publish(target, "unreplicated\(index)") }
            #expect(highest == 10)
            #expect(try await onA.read(through: highest, within: 10))
            #expect(try await onB.read(through: highest, within: 10))
            let oldPort = set.master.port
            await set.master.kill()
            set.replicas[0].resume()
            _ = try await set.waitForPromotion(from: oldPort)
            // (Its counter may already be raised by the gateways; its window shows what it lacks.)
            #expect(await RedisCLI.run(port: set.replicas[0].port, ["XLEN", "sse:{behind}:events"])
                .trimmingCharacters(in: .whitespacesAndNewlines) == "5", "the promoted replica was not behind")

            // Publishing resumes past every id a subscriber saw.
            var next: UInt64 = 0
            #expect(try await eventually(within: 10) {
                let reply = try await a.post(target, "after")
                next = KeepAlivePublisher.id(in: reply.body) ?? 0
                return reply.status == 200
            })
            #expect(next == highest + 1, "the first id after the failover is \(next), the highest seen \(highest)")
            // B may reach the new master after A's pause ended (the liveness of both lapsed during
            // the promotion): B then pauses the shard again until its own syncs are done.
            var second: UInt64 = 0
            #expect(try await eventually(within: 5) {
                let reply = try await b.post(target, "after2")
                second = KeepAlivePublisher.id(in: reply.body) ?? 0
                return reply.status == 200
            })
            #expect(second == next + 1)
            for stream in [onA, onB] {
                #expect(try await stream.read(through: second, within: 10))
                #expect(stream.problem == nil, "\(stream.problem ?? "")")
                #expect(!stream.stream.ended)
            }
            let resumed = try await FailoverStream.open(port: b.port, target: target, headers: [("Last-Event-ID", String(highest))])
            defer { resumed.close() }
            #expect(try await resumed.read(through: second, within: 10))
            #expect(resumed.received.keys.min() == next, "resumed after \(highest) but got \(resumed.received.keys.sorted())")
        }
    }
}
