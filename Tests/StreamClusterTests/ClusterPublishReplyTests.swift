import RedisClient
@testable import StreamCluster
import StreamHub
import Synchronization
import Testing
import TestSupport

/// Replies first: the publishing gateway delivers to its own subscribers from the
/// script's reply, and with publishers on several gateways at once every subscriber
/// still gets every id once, in order, snapshot → live without a gap.
@Suite(.timeLimit(.minutes(1)))
struct ClusterPublishReplyTests {
    /// A gateway whose pub/sub delivers nothing (muted by a proxy) still delivers its own publishes, state and events, at once.
    @Test func ownPublishesReachOwnSubscribersWithoutTheirEcho() async throws {
        let redis = try await RedisServer.start()
        let proxy = try await LinkProxy.start(to: redis.port)
        let engine = try RunningEngine(proxy.url)
        do {
            try await engine.ready()
            let events = try await engine.subscribe("muted")
            let state = try await engine.subscribe("muted", .state)
            try await proxy.mute()
            for index in 1...5 { _ = try await engine.publish("muted", .events, "e\(index)") }
            _ = try await engine.publish("muted", .state, "s1")
            // Well within the 3 s after which the missing probes would take the link down.
            let received = try await events.events(5, within: 2)
            #expect(received.compactMap(\.number) == Array(1...5))
            #expect(received.map(\.data) == (1...5).map { "e\($0)" })
            #expect(try await state.events(1, within: 2).first?.data == "s1")
        } catch {
            await engine.stop()
            await proxy.stop()
            await redis.stop()
            throw error
        }
        await engine.stop()
        await proxy.stop()
        await redis.stop()
    }

    /// Three gateways, four publishers each with their publishes in flight together on one topic; subscribers
    /// from the start and ones arriving midway (with and without Last-Event-ID) on every gateway: each gets
    /// every id from its start once, in order, up to the last.
    @Test func interleavedPublishersOnThreeGatewaysDeliverEveryIDOnceInOrder() async throws {
        let perPublisher = 40
        let total = UInt64(3 * 4 * perPublisher)
        try await withCluster(engines: 3) { _, engines in
            var early: [Subscription] = []
            for engine in engines {
                early.append(try await engine.subscribe("mix"))
                early.append(try await engine.subscribe("mix"))
            }
            let acknowledged = HighestID()
            async let published: [UInt64] = withThrowingTaskGroup(of: [UInt64].self) { group in
                for engine in engines {
                    for publisher in 0..<4 {
                        group.addTask {
                            var ids: [UInt64] = []
                            for index in 0..<perPublisher {
                                let id = try await engine.publish("mix", .events, "p\(publisher)-\(index)").id
                                acknowledged.saw(id)
                                ids.append(id)
                            }
                            return ids
                        }
                    }
                }
                var all: [UInt64] = []
                for try await ids in group { all += ids }
                return all
            }
            // Midway: new subscribers on every gateway, resuming and live.
            while acknowledged.value < total / 3 { try await Task.sleep(for: .milliseconds(5)) }
            var late: [(Subscription, UInt64?)] = []
            for engine in engines {
                let resumeAfter = acknowledged.value - 20
                late.append((try await engine.subscribe("mix", after: resumeAfter), resumeAfter))
                late.append((try await engine.subscribe("mix"), nil))
            }
            #expect(try await published.sorted() == Array(1...total))
            for subscription in early {
                #expect(try await subscription.events(through: total) == Array(1...total))
            }
            for (subscription, resumeAfter) in late {
                let ids = try await subscription.events(through: total)
                let first = resumeAfter.map { $0 + 1 } ?? ids.first ?? total
                #expect(ids == Array(first...total), "resumed after \(resumeAfter.map(String.init) ?? "nothing"): \(ids)")
            }
        }
    }
}

/// The highest id acknowledged so far, shared by publishing tasks.
final class HighestID: Sendable {
    private let highest = Atomic<UInt64>(0)
    var value: UInt64 { highest.load(ordering: .relaxed) }
    func saw(_ id: UInt64) { highest.max(id, ordering: .relaxed) }
}

extension Subscription {
    /// The ids received until the one numbered `last` (throws `TimedOut` after `seconds`).
    func events(through last: UInt64, within seconds: Double = 20) async throws -> [UInt64] {
        try await withThrowingTaskGroup(of: [UInt64]?.self) { group in
            group.addTask {
                var parser = SSEParser()
                var ids: [UInt64] = []
                while ids.last ?? 0 < last, let batch = await self.nextBatch() {
                    for frame in batch { ids += try parser.feed(frame).compactMap(\.number) }
                }
                return ids
            }
            group.addTask {
                try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
                return nil
            }
            let first = try await group.next()!
            group.cancelAll()
            guard let ids = first else { throw TimedOut(what: "id \(last)") }
            return ids
        }
    }
}
