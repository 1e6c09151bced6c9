import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// A cluster of two gateway processes on one redis-server, one of them killed.
    @Suite struct ClusterFailover {
        /// 2,000 subscribers in CI (5,000 in the soak), all reconnecting at once.
        static let subscribers = Soak.isOn ? 5_000 : 2_000

        /// Gateway A is killed with SIGKILL while its 2,000 subscribers read a topic published through gateway B (100 values, one every 20 ms, slower under the load): every one reconnects to B at once with Last-Event-ID (a reconnect storm) and receives every id from the first to the last exactly once, in order; A drops out of B's subscriber count within seconds.
        @Test func subscribersOfAKilledGatewayResumeOnAnotherWithoutLossOrDuplicate() async throws {
            let redis = try await RedisServer.start()
            defer { Task { await redis.stop() } }
            let arguments = ["--redis", redis.url, "--replay-count", "4096"]
            let a = try await GatewayProcess.start(arguments)
            let b = try await GatewayProcess.start(arguments)
            defer { Task { await a.child.stop(); await b.child.stop() } }
            let target = "/events/storm"

            let opened = SharedValue(0)
            let finalID = SharedValue<UInt64?>(nil)
            let killed = SharedValue<Bool>(false)
            let subscribers = Self.subscribers
            // Each subscriber: read from A until A dies, then resume on B from its last id.
            async let problems: [String] = withThrowingTaskGroup(of: String?.self) { group in
                for _ in 0..<subscribers {
                    group.addTask {
                        let stream = try await CheckedStream.open(port: a.port, target: target, order: .contiguous, headWithin: 30)
                        opened.update { $0 += 1 }
                        let ending = await stream.readToEnd(within: 60)
                        let resumeAfter = stream.last
                        stream.close()
                        guard killed.value else { return "A's stream ended before A was killed: \(ending)" }
                        let headers = resumeAfter.map { [("Last-Event-ID", String($0))] } ?? []
                        let second = try await CheckedStream.open(port: b.port, target: target, order: .contiguous,
                                                                  headWithin: 30, headers: headers)
                        defer { second.close() }
                        while finalID.value == nil {
                            _ = try await second.read(count: second.count + 1, within: 0.5)
                        }
                        guard try await second.read(throughID: finalID.value!, within: 30) else {
                            return "resumed stream stopped at \(second.last.map(String.init) ?? "nothing")"
                        }
                        if let problem = stream.problem ?? second.problem { return problem }
                        if stream.first.map({ $0 != 1 }) ?? false { return "A's stream began at \(stream.first!)" }
                        if second.first != (resumeAfter ?? 0) + 1 {
                            return "resumed after \(resumeAfter ?? 0) but began at \(second.first.map(String.init) ?? "nothing")"
                        }
                        return nil
                    }
                }
                var problems: [String] = []
                for try await problem in group {
                    if let problem { problems.append(problem) }
                }
                return problems
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while opened.value < subscribers, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(opened.value == subscribers)
            let publisher = KeepAlivePublisher(port: b.port)
            async let published: UInt64 = {
                defer { publisher.close() }
                var last: UInt64 = 0
                for index in 1...100 {
                    last = try await publisher.publish(target, Array("e\(index)".utf8))
                    try await Task.sleep(for: .milliseconds(20))
                }
                finalID.set(last)
                return last
            }()
            try await Task.sleep(for: .seconds(1))
            killed.set(true)
            a.child.send(SIGKILL)
            let results = try await problems
            let last = try await published
            #expect(results.isEmpty, "\(results.count) subscribers went wrong, e.g. \(results.prefix(3))")
            #expect(last >= 100)
            // A's 2,000 leave the count once its liveness lapses (3 s); B's own are exact.
            let counted = try await eventuallyValue(within: 10) {
                let reply = try await b.send("POST", target, body: Array("end".utf8))
                let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any]
                return object?["subscribers"] as? Int
            } until: { $0 == 0 }
            #expect(counted == 0)
        }
    }
}

/// Polls `read` until `done` holds for its value or `seconds` pass; the last value.
func eventuallyValue<T>(within seconds: Double, _ read: () async throws -> T?, until done: (T) -> Bool) async throws -> T? {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    var last: T?
    repeat {
        last = try await read()
        if let value = last, done(value) { return value }
        try await Task.sleep(for: .milliseconds(200))
    } while ContinuousClock.now < deadline
    return last
}
