import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// A partition, not a crash: two gateways on one redis-server, B's link to it through
    /// a `LinkProxy` that cuts it (connections reset, new ones refused) or stalls it (open
    /// but silent) while A and Redis go on.
    @Suite struct LinkPartition {
        static let subscribersPerGateway = 30
        /// How long the link stays partitioned: longer than B's probe time and several heartbeats.
        static let faultSeconds = 5.0

        enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
            case cut
            case stall
            var testDescription: String { rawValue }
        }

        /// One POST's outcome, as the publisher saw it.
        struct Outcome: Sendable {
            let sent: ContinuousClock.Instant
            let answered: ContinuousClock.Instant
            let status: Int
            let retryAfter: Bool
            let id: UInt64?
            let data: String
            let body: String
        }

        /// B's link cut or stalled for 5 s while A publishes every 20 ms and 30 subscribers read on
        /// each gateway: B's `/readyz` turns 503 within its probe time (saying why) and its publishes
        /// are answered 503 with `Retry-After` within 2 s (never a hang, never a 200), new
        /// subscriptions on B 503; B's open streams stay open and get their heartbeats; A stays ready,
        /// every one of its publishes is acknowledged and its streams go on live. Restored, B is ready
        /// again within 5 s and publishes again; every stream on both gateways then has every
        /// acknowledged id once, in order (or inside a `gap`), never an id going backwards.
        @Test(arguments: Fault.allCases)
        func oneGatewaysLinkPartitioned(_ fault: Fault) async throws {
            let redis = try await RedisServer.start()
            defer { Task { await redis.stop() } }
            let proxy = try await LinkProxy.start(to: redis.port)
            defer { Task { await proxy.stop() } }
            let common = ["--replay-count", "4096", "--heartbeat", "1s"]
            let a = try await GatewayProcess.start(["--redis", redis.url] + common)
            let b = try await GatewayProcess.start(["--redis", proxy.url] + common)
            defer { Task { await a.child.stop(); await b.child.stop() } }
            for gateway in [a, b] {
                #expect(try await eventually(within: 10) { try await gateway.send("GET", "/readyz").status == 200 })
            }
            let target = "/events/partition"
            let gateways = [a, b]

            // 0: before, 1: partitioned, 2: restored. Each subscriber notes its heartbeats and last id
            // as it sees each phase begin, then reads until told the final id.
            let phase = SharedValue(0)
            let opened = SharedValue(0)
            let finalID = SharedValue<UInt64?>(nil)
            let acknowledgedValues = SharedValue<[UInt64: String]>([:])
            let perGateway = Self.subscribersPerGateway
            async let readers: [String] = withThrowingTaskGroup(of: String?.self) { group in
                for index in 0..<(2 * perGateway) {
                    group.addTask {
                        let onB = index % 2 == 1
                        let name = "stream \(index) on \(onB ? "B" : "A")"
                        let stream = try await FailoverStream.open(port: gateways[index % 2].port, target: target)
                        defer { stream.close() }
                        opened.update { $0 += 1 }
                        var atFault: (comments: Int, last: UInt64)?
                        var atRestore: (comments: Int, last: UInt64)?
                        for _ in 0..<2_000 where finalID.value == nil {
                            _ = try await stream.read(through: stream.last + 1, within: 0.2)
                            if stream.stream.ended { return "\(name) ended at \(stream.last)" }
                            if phase.value >= 1, atFault == nil { atFault = (stream.stream.comments, stream.last) }
                            if phase.value >= 2, atRestore == nil { atRestore = (stream.stream.comments, stream.last) }
                        }
                        guard let final = finalID.value, let atFault, let atRestore else { return "\(name): the test never ended" }
                        guard try await stream.read(through: final, within: 30) else {
                            return "\(name) stopped at \(stream.last) (final \(final))"
                        }
                        if let problem = stream.problem { return "\(name): \(problem)" }
                        if onB, atRestore.comments - atFault.comments < 2 {
                            return "\(name) got \(atRestore.comments - atFault.comments) heartbeats while partitioned"
                        }
                        if !onB, atRestore.last <= atFault.last {
                            return "\(name) received nothing while B was partitioned (\(atFault.last))"
                        }
                        let missing = acknowledgedValues.value.filter { !stream.has($0.key, $0.value) }
                        if let first = missing.keys.min() {
                            return "\(name) lacks \(missing.count) acknowledged values, the first \(first)"
                        }
                        return nil
                    }
                }
                var problems: [String] = []
                for try await problem in group { if let problem { problems.append(problem) } }
                return problems
            }
            let openDeadline = ContinuousClock.now + .seconds(60)
            while opened.value < 2 * perGateway, ContinuousClock.now < openDeadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(opened.value == 2 * perGateway)

            // A publishes a value every 20 ms until told to stop.
            let stopPublishing = SharedValue(false)
            async let onA: [Outcome] = Self.publish(on: a, target: target, prefix: "a", every: .milliseconds(20),
                                                    until: stopPublishing)
            try await Task.sleep(for: .seconds(1))

            // The partition: B's /readyz watched every 50 ms, B's publishes every 200 ms.
            switch fault {
            case .cut: try await proxy.cut()
            case .stall: try await proxy.stall()
            }
            let faultAt = ContinuousClock.now
            phase.set(1)
            let stopOnB = SharedValue(false)
            async let onB: [Outcome] = Self.publish(on: b, target: target, prefix: "b", every: .milliseconds(200),
                                                    until: stopOnB)
            var notReadyAt: ContinuousClock.Instant?
            var readyzReason = ""
            while notReadyAt == nil, ContinuousClock.now < faultAt + .seconds(8) {
                let reply = try await b.send("GET", "/readyz", within: 2)
                if reply.status == 503 {
                    notReadyAt = .now
                    readyzReason = reply.text
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            let aReady = try await a.send("GET", "/readyz").status
            let newOnB = try await b.openStream(target, headWithin: 3)
            newOnB.stream.close()
            // A new subscriber on A is served while B is cut off.
            let newOnA = try await FailoverStream.open(port: a.port, target: target)
            defer { newOnA.close() }
            let newOnAReads = try await newOnA.read(through: 1, within: 5)
            while ContinuousClock.now < faultAt + .seconds(Self.faultSeconds) {
                try await Task.sleep(for: .milliseconds(100))
            }
            stopOnB.set(true)
            let partitionedPublishes = try await onB

            try await proxy.restore()
            let restoredAt = ContinuousClock.now
            phase.set(2)
            var readyAgainAt: ContinuousClock.Instant?
            while readyAgainAt == nil, ContinuousClock.now < restoredAt + .seconds(15) {
                if try await b.send("GET", "/readyz", within: 2).status == 200 { readyAgainAt = .now }
                try await Task.sleep(for: .milliseconds(50))
            }
            var publishedOnBAgain: UInt64?
            for _ in 0..<100 where publishedOnBAgain == nil {
                let reply = try await b.post(target, "b after")
                if reply.status == 200 { publishedOnBAgain = KeepAlivePublisher.id(in: reply.body) }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .seconds(1))
            stopPublishing.set(true)
            let published = try await onA
            let acknowledged = published.filter { $0.status == 200 }
            var values = Dictionary(acknowledged.map { ($0.id ?? 0, $0.data) }, uniquingKeysWith: { first, _ in first })
            if let publishedOnBAgain { values[publishedOnBAgain] = "b after" }
            acknowledgedValues.set(values)
            finalID.set(values.keys.max() ?? 0)
            let problems = try await readers

            let detection = notReadyAt.map { $0 - faultAt }
            let recovery = readyAgainAt.map { $0 - restoredAt }
            Soak.report("link \(fault): B not ready \(detection.map(secondsText) ?? "never") after the \(fault), "
                        + "ready again \(recovery.map(secondsText) ?? "never") after the restore; "
                        + "\(partitionedPublishes.count) of B's POSTs refused meanwhile, the slowest answered in "
                        + secondsText(partitionedPublishes.map { $0.answered - $0.sent }.max() ?? .zero)
                        + "; A acknowledged \(acknowledged.count) of \(published.count)")

            // B: not ready within its probe time, saying why; publishes refused promptly, new subscriptions too.
            // A cut closes the connections (seen at once); a stall is found by the next probe's
            // PUBLISH timing out (at most 1 s + 750 ms); both with room for a loaded machine.
            let probeTime: Duration = fault == .cut ? .seconds(2) : .seconds(4)
            #expect(detection.map { $0 < probeTime } ?? false, "B not ready \(detection.map(secondsText) ?? "never") after the \(fault)")
            #expect(readyzReason.contains("Redis"), "\(readyzReason)")
            #expect(!partitionedPublishes.isEmpty)
            for outcome in partitionedPublishes {
                #expect(outcome.status == 503 && outcome.retryAfter, "B answered \(outcome.status) while partitioned: \(outcome.body)")
                #expect(outcome.answered - outcome.sent < .seconds(2), "B took \(outcome.answered - outcome.sent) to answer a POST")
            }
            #expect(newOnB.head?.status == 503, "a new subscription on B got \(newOnB.head.map { String($0.status) } ?? "no answer")")
            // A: unaffected.
            #expect(aReady == 200)
            #expect(newOnAReads, "a new subscriber on A got nothing while B was partitioned")
            #expect(published.allSatisfy { $0.status == 200 && $0.answered - $0.sent < .seconds(2) },
                    "A refused or was slow: \(published.first { $0.status != 200 }.map { "\($0.status) \($0.body)" } ?? "slow")")
            let ids = acknowledged.compactMap(\.id)
            #expect(ids.count == acknowledged.count && zip(ids, ids.dropFirst()).allSatisfy { $0 < $1 }, "A's ids went backwards")
            // B back.
            #expect(recovery.map { $0 < .seconds(5) } ?? false, "B ready again \(recovery.map(secondsText) ?? "never") after the restore")
            #expect(publishedOnBAgain != nil, "B does not publish after the restore")
            #expect(problems.isEmpty, "\(problems.count) streams went wrong, e.g. \(problems.prefix(3))")
        }

        /// POSTs a value to `target` on `gateway` every `interval` until `stop` (at most 2,000).
        static func publish(on gateway: GatewayProcess, target: String, prefix: String, every interval: Duration,
                            until stop: SharedValue<Bool>) async throws -> [Outcome] {
            var outcomes: [Outcome] = []
            for index in 1...2_000 where !stop.value {
                let data = "\(prefix)\(index)"
                let sent = ContinuousClock.now
                let reply = try? await gateway.send("POST", target, body: Array(data.utf8), within: 5)
                outcomes.append(Outcome(sent: sent, answered: .now, status: reply?.status ?? 0,
                                        retryAfter: reply?.head.headers["Retry-After"] != nil,
                                        id: reply.flatMap { KeepAlivePublisher.id(in: $0.body) }, data: data,
                                        body: reply?.text ?? "no answer"))
                try await Task.sleep(for: interval)
            }
            return outcomes
        }
    }
}
