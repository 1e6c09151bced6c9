import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// Gateways (the real executable) on `redis+cluster://`: three masters with a replica each
    /// (`RedisCluster.start()`); a master killed or silenced under steady publishing, and slots
    /// moved while publishing and subscribing.
    @Suite struct RedisClusterGateways {
        static let subscribers = Soak.isOn ? 1_000 : 300

        enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
            /// SIGKILL: the master is gone.
            case kill
            /// SIGSTOP: the master holds its connections and answers nothing (a partition), SIGCONT later.
            case stop
            var testDescription: String { rawValue }
        }

        /// A master (serving two of the three topics) SIGKILLed or SIGSTOPped while two gateways publish
        /// every 20 ms, alternately and over the three topics, and 300 subscribers read: A (acknowledges
        /// once the master holds a value) has publishes refused at most until the promotion plus 2 s,
        /// then 200 again; B (`--redis-min-replicas 1`) until the old master is back as the new one's
        /// replica; every POST answered within 2 s, 200 or 503; acknowledged ids go up per topic; every
        /// stream stays open and gets every acknowledged id of its topic once, in order (or in a `gap`);
        /// afterwards none of B's acknowledged values is missing from its topic's window. The topic on
        /// another master is served throughout: none of A's publishes to it is refused.
        @Test(arguments: Fault.allCases)
        func masterLostUnderSteadyPublishing(_ fault: Fault) async throws {
            let cluster = try await RedisCluster.start()
            let arguments = ["--redis", cluster.url, "--replay-count", "4096"]
            let a = try await GatewayProcess.start(arguments)
            let b = try await GatewayProcess.start(arguments + ["--redis-min-replicas", "1"])
            defer { Task { await a.child.stop(); await b.child.stop(); _ = cluster } }
            for gateway in [a, b] {
                #expect(try await eventually(within: 15) { try await gateway.send("GET", "/readyz").status == 200 })
            }
            let masters = try await cluster.topology().filter { $0.isMaster && !$0.slots.isEmpty }
            let victim = masters[0]
            let onVictim = try await ClusterGateways.topics(servedBy: victim.port, count: 2, in: cluster, prefix: "lost")
            let elsewhere = try await ClusterGateways.topics(servedBy: masters[1].port, count: 1, in: cluster, prefix: "kept")
            let topics = onVictim + elsewhere
            let victimSlot = try await cluster.keySlot("{\(onVictim[0])}")

            let run = ClusterRun(topics: topics, gateways: [a, b])
            async let readers = run.read(subscribers: Self.subscribers)
            try await run.waitUntilOpen(Self.subscribers)
            async let outcomes = run.publish(every: .milliseconds(20))
            try await Task.sleep(for: .milliseconds(1500))

            let server = try #require(cluster.server(port: victim.port))
            let faultAt = ContinuousClock.now
            switch fault {
            case .kill: await server.kill()
            case .stop: server.pause()
            }
            let newPort = try await cluster.waitForPromotion(servingSlot: victimSlot, formerMasterPort: victim.port)
            let promoted = ContinuousClock.now
            run.promotedAt.set(promoted)
            try await Task.sleep(for: .seconds(4))
            // The old master back: it becomes a replica of the new one, and B's publishes are confirmed again.
            switch fault {
            case .kill: try await server.start(again: true)
            case .stop: server.resume()
            }
            #expect(try await eventually(within: 20) {
                await RedisCLI.run(port: victim.port, ["ROLE"]).hasPrefix("slave")
            }, "the old master did not become a replica")
            let backAt = ContinuousClock.now
            #expect(try await eventually(within: 15) {
                run.outcomes.value.contains { $0.gateway == 1 && $0.status == 200 && $0.sent > backAt && onVictim.contains($0.topic) }
            }, "B acknowledged nothing on the lost master's topics once its replica was back")
            run.stopPublishing.set(true)
            let published = try await outcomes
            run.announce(published, gapsAllowed: true)
            let problems = try await readers

            let refusedOnA = published.filter { $0.gateway == 0 && $0.status != 200 }
            Soak.report("redis cluster, master \(fault): promoted \(secondsText(promoted - faultAt)) after; A refused "
                        + "\(refusedOnA.count), the last \(refusedOnA.last.map { secondsText($0.sent - promoted) } ?? "none") after the promotion "
                        + "(\(refusedOnA.last?.body.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")); "
                        + "\(published.filter { $0.status == 200 }.count) of \(published.count) acknowledged")
            #expect(newPort != victim.port)
            #expect(published.allSatisfy { $0.answered - $0.sent < .seconds(2) }, "a POST took 2 s or more")
            #expect(published.allSatisfy { $0.status == 200 || $0.status == 503 },
                    "\(published.first { $0.status != 200 && $0.status != 503 }.map { "\($0.status) \($0.body)" } ?? "")")
            let refusedElsewhere = refusedOnA.filter { elsewhere.contains($0.topic) }
            #expect(refusedElsewhere.isEmpty, "\(refusedElsewhere.count) of A's publishes to a topic on a surviving master refused, e.g. \(refusedElsewhere.first?.body ?? "")")
            let late = refusedOnA.filter { $0.sent > promoted + .seconds(2) }
            #expect(late.isEmpty, "\(late.count) of A's publishes refused more than 2 s after the promotion, e.g. \(late.first?.body ?? "")")
            if !late.isEmpty {  // What each gateway's link did, to tell why.
                for (name, gateway) in [("A", a), ("B", b)] {
                    print("\(name)'s log:\n" + gateway.child.stderr.text.split(separator: "\n").filter { $0.contains("redis") }.suffix(30).joined(separator: "\n"))
                }
            }
            let lateOnB = published.filter { $0.gateway == 1 && $0.status != 200 && $0.sent > backAt + .seconds(10) }
            #expect(lateOnB.isEmpty, "\(lateOnB.count) of B's publishes refused more than 10 s after its replica was back")
            #expect(run.idsGoUp(published), "acknowledged ids went backwards")
            #expect(problems.isEmpty, "\(problems.count) streams went wrong, e.g. \(problems.prefix(3))")
            let lost = try await run.acknowledgedMissingFromWindows(published.filter { $0.gateway == 1 }, on: a)
            #expect(lost.isEmpty, "\(lost.count) of B's acknowledged values lost, e.g. \(lost.prefix(3))")
        }

        /// The slots of the topics in use moved to other masters one by one (`moveSlot`: MIGRATING,
        /// MIGRATE, SETSLOT, as `redis-cli --cluster reshard` does) and 100 more slots resharded with
        /// `redis-cli --cluster reshard` itself, while two gateways publish every 20 ms and 300
        /// subscribers read: every POST is answered within 2 s with 200 or 503 (a 503 only while a slot
        /// moves), acknowledged ids go up per topic, and every stream gets every acknowledged id of its
        /// topic exactly once, in order, without a gap: nothing lost, nothing twice; each topic is
        /// published on its new owner afterwards, which holds its counter.
        @Test func slotsMovedWhilePublishingAndSubscribing() async throws {
            let cluster = try await RedisCluster.start()
            let arguments = ["--redis", cluster.url, "--replay-count", "4096"]
            let a = try await GatewayProcess.start(arguments)
            let b = try await GatewayProcess.start(arguments)
            defer { Task { await a.child.stop(); await b.child.stop(); _ = cluster } }
            for gateway in [a, b] {
                #expect(try await eventually(within: 15) { try await gateway.send("GET", "/readyz").status == 200 })
            }
            let masters = try await cluster.topology().filter { $0.isMaster && !$0.slots.isEmpty }
            var topics: [String] = []
            for master in masters { topics += try await ClusterGateways.topics(servedBy: master.port, count: 1, in: cluster, prefix: "moving") }

            let run = ClusterRun(topics: topics, gateways: [a, b])
            async let readers = run.read(subscribers: Self.subscribers)
            try await run.waitUntilOpen(Self.subscribers)
            async let outcomes = run.publish(every: .milliseconds(20))
            try await Task.sleep(for: .seconds(1))

            let started = ContinuousClock.now
            for (index, topic) in topics.enumerated() {
                let slot = try await cluster.keySlot("{\(topic)}")
                let target = masters[(index + 1) % masters.count].port
                try await cluster.moveSlot(slot, toPort: target)
                #expect(try await cluster.port(servingSlot: slot) == target)
                try await Task.sleep(for: .milliseconds(500))
            }
            try await cluster.reshard(slots: 100, fromPort: masters[1].port, toPort: masters[2].port)
            let moved = ContinuousClock.now
            try await Task.sleep(for: .seconds(2))
            run.stopPublishing.set(true)
            let published = try await outcomes
            run.announce(published, gapsAllowed: false)
            let problems = try await readers

            let refused = published.filter { $0.status != 200 }
            Soak.report("redis cluster, slots moved (\(secondsText(moved - started))): \(refused.count) of "
                        + "\(published.count) POSTs refused")
            #expect(published.allSatisfy { $0.answered - $0.sent < .seconds(2) }, "a POST took 2 s or more")
            #expect(refused.allSatisfy { $0.status == 503 }, "\(refused.first.map { "\($0.status) \($0.body)" } ?? "")")
            #expect(refused.allSatisfy { $0.sent < moved + .seconds(1) }, "publishes still refused after the moves")
            #expect(published.filter { $0.status == 200 }.count > published.count / 2, "most publishes were refused")
            #expect(run.idsGoUp(published), "acknowledged ids went backwards")
            #expect(problems.isEmpty, "\(problems.count) streams went wrong, e.g. \(problems.prefix(3))")
            // Each topic published on its new owner after the moves, and its counter is there.
            for topic in topics {
                let acknowledged = published.filter { $0.topic == topic && $0.status == 200 }
                #expect(acknowledged.contains { $0.sent > moved }, "nothing acknowledged on \(topic) after the moves")
                let owner = try #require(try await cluster.port(servingSlot: try await cluster.keySlot("{\(topic)}")))
                let held = await RedisCLI.run(port: owner, ["HGET", "sse:{\(topic)}:id", "events"])
                let last = acknowledged.compactMap(\.id).max() ?? 0
                #expect(UInt64(held.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= last,
                        "\(topic)'s counter on its owner \(owner) is \(held), the last acknowledged id \(last)")
            }
        }
    }
}

/// The helpers of the Redis Cluster gateway tests.
enum ClusterGateways {
    /// `count` topic names `<prefix><n>` whose slot the master on `port` serves.
    static func topics(servedBy port: Int, count: Int, in cluster: RedisCluster, prefix: String) async throws -> [String] {
        let master = try #require(try await cluster.topology().first { $0.port == port })
        var found: [String] = []
        for index in 0..<500 where found.count < count {
            let name = "\(prefix)\(index)"
            if master.serves(try await cluster.keySlot("{\(name)}")) { found.append(name) }
        }
        #expect(found.count == count, "no topic found on master \(port)")
        return found
    }
}

/// One run of publishers and subscribers over several topics and two gateways: the
/// subscribers (`read`) check each event as it arrives (`FailoverStream`), the publisher
/// (`publish`) alternates gateways and topics, and `announce` tells the subscribers what was
/// acknowledged and collects what went wrong.
final class ClusterRun: Sendable {
    /// One POST's outcome, as the publisher saw it.
    struct Outcome: Sendable {
        let gateway: Int
        let topic: String
        let sent: ContinuousClock.Instant
        let answered: ContinuousClock.Instant
        let status: Int
        let id: UInt64?
        let data: String
        let body: String
    }

    let topics: [String]
    let gateways: [GatewayProcess]
    let opened = SharedValue(0)
    let promotedAt = SharedValue<ContinuousClock.Instant?>(nil)
    let stopPublishing = SharedValue(false)
    let outcomes = SharedValue<[Outcome]>([])
    /// Per topic, once publishing stopped: the last acknowledged id and the acknowledged values.
    private let acknowledgedByTopic = SharedValue<[String: (last: UInt64, values: [UInt64: String])]?>(nil)
    private let gapsAllowed = SharedValue(true)

    init(topics: [String], gateways: [GatewayProcess]) {
        self.topics = topics
        self.gateways = gateways
    }

    /// `subscribers` streams, spread over the gateways and topics, each read in its own task
    /// until `announce`; what went wrong, one line per stream.
    func read(subscribers: Int) async throws -> [String] {
        try await withThrowingTaskGroup(of: String?.self) { group in
            for index in 0..<subscribers {
                group.addTask { [self] in
                    let topic = topics[index % topics.count]
                    let name = "stream \(index) (\(topic), gateway \(index % gateways.count))"
                    let stream = try await FailoverStream.open(port: gateways[index % gateways.count].port, target: "/events/\(topic)")
                    defer { stream.close() }
                    opened.update { $0 += 1 }
                    for _ in 0..<3_000 where acknowledgedByTopic.value == nil {
                        _ = try await stream.read(through: stream.last + 1, within: 0.2)
                        if stream.stream.ended { return "\(name) ended at \(stream.last)" }
                    }
                    guard let expected = acknowledgedByTopic.value?[topic] else { return "\(name): the run never finished" }
                    guard try await stream.read(through: expected.last, within: 30) else {
                        return "\(name) stopped at \(stream.last) (last acknowledged \(expected.last))"
                    }
                    if let problem = stream.problem { return "\(name): \(problem)" }
                    if !gapsAllowed.value, let gap = stream.lost.first { return "\(name) was told of a gap: \(gap)" }
                    let missing = expected.values.filter { !stream.has($0.key, $0.value) }
                    if let first = missing.keys.min() { return "\(name) lacks \(missing.count) acknowledged values, the first \(first)" }
                    return nil
                }
            }
            var problems: [String] = []
            for try await problem in group { if let problem { problems.append(problem) } }
            return problems
        }
    }

    /// Waits (up to 60 s) until `count` streams are open.
    func waitUntilOpen(_ count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while opened.value < count, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(opened.value == count, "\(opened.value) of \(count) streams opened")
    }

    /// POSTs a value every `interval`, alternating gateways and topics, until `stopPublishing`
    /// (at most 5,000); every outcome.
    func publish(every interval: Duration) async throws -> [Outcome] {
        for index in 1...5_000 where !stopPublishing.value {
            let gateway = index % gateways.count
            let topic = topics[(index / gateways.count) % topics.count]
            let data = "v\(index)"
            let sent = ContinuousClock.now
            let reply = try? await gateways[gateway].send("POST", "/events/\(topic)", body: Array(data.utf8), within: 5)
            let outcome = Outcome(gateway: gateway, topic: topic, sent: sent, answered: .now, status: reply?.status ?? 0,
                                  id: reply.flatMap { KeepAlivePublisher.id(in: $0.body) }, data: data,
                                  body: reply?.text ?? "no answer")
            outcomes.update { $0.append(outcome) }
            try await Task.sleep(for: interval)
        }
        return outcomes.value
    }

    /// Tells the readers (still reading) what was acknowledged, per topic.
    func announce(_ published: [Outcome], gapsAllowed: Bool) {
        self.gapsAllowed.set(gapsAllowed)
        var table: [String: (last: UInt64, values: [UInt64: String])] = [:]
        for topic in topics {
            let acknowledged = published.filter { $0.topic == topic && $0.status == 200 }
            let values = Dictionary(acknowledged.compactMap { outcome in outcome.id.map { ($0, outcome.data) } },
                                    uniquingKeysWith: { first, _ in first })
            table[topic] = (values.keys.max() ?? 0, values)
        }
        acknowledgedByTopic.set(table)
    }

    /// Whether each topic's acknowledged ids only go up, in the order they were acknowledged.
    func idsGoUp(_ published: [Outcome]) -> Bool {
        topics.allSatisfy { topic in
            let acknowledged = published.filter { $0.topic == topic && $0.status == 200 }
            let ids = acknowledged.compactMap(\.id)
            return ids.count == acknowledged.count && zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }
        }
    }

    /// Acknowledged values of `outcomes` a fresh subscriber (Last-Event-ID 0, on `gateway`) does
    /// not find in its topic's window.
    func acknowledgedMissingFromWindows(_ outcomes: [Outcome], on gateway: GatewayProcess) async throws -> [String] {
        var missing: [String] = []
        for topic in topics {
            let acknowledged = outcomes.filter { $0.topic == topic && $0.status == 200 }
            guard let last = acknowledged.compactMap(\.id).max() else { continue }
            let replay = try await FailoverStream.open(port: gateway.port, target: "/events/\(topic)", headers: [("Last-Event-ID", "0")])
            defer { replay.close() }
            _ = try await replay.read(through: last, within: 10)
            missing += acknowledged.filter { replay.received[$0.id ?? 0] != $0.data }.map { "\(topic) \($0.id ?? 0) \($0.data)" }
        }
        return missing
    }
}
