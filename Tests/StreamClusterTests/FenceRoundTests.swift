import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// A reconnect storm: subscribers of one topic arriving together share their fence
/// reads (one `HMGET` per topic per round, counted by Redis), and each still starts
/// from its Last-Event-ID and goes live without a gap.
@Suite(.timeLimit(.minutes(1)))
struct FenceRoundTests {
    /// 1,000 subscribers of one topic arriving at once cost a handful of fence reads, not 1,000, and every one
    /// gets exactly the ids after its Last-Event-ID, the replayed and the live.
    @Test func subscribersArrivingTogetherShareTheirFenceReads() async throws {
        let count = 1000
        try await withCluster { redis, engines in
            let (a, b) = (engines[0], engines[1])
            for index in 1...50 { _ = try await b.publish("storm", .events, "e\(index)") }
            let before = try await redis.calls(of: "hmget")
            let subscriptions = try await withThrowingTaskGroup(of: Subscription.self) { group in
                for _ in 0..<count {
                    group.addTask { try await a.subscribe("storm", after: 40) }
                }
                var subscriptions: [Subscription] = []
                for try await subscription in group { subscriptions.append(subscription) }
                return subscriptions
            }
            let reads = try await redis.calls(of: "hmget") - before
            print("fence rounds: \(count) subscribers of one topic arriving together cost \(reads) HMGET")
            // One per round plus the topic's first sync (its script's HMGET); rounds are loop turns, a few
            // dozen even when a loaded machine spreads the arrivals.
            #expect(reads <= 50, "\(reads) HMGET for \(count) subscribers")
            for index in 51...55 { _ = try await b.publish("storm", .events, "e\(index)") }
            try await withThrowingTaskGroup(of: [UInt64].self) { group in
                for subscription in subscriptions {
                    group.addTask { try await subscription.events(15).compactMap(\.number) }
                }
                for try await ids in group { #expect(ids == Array(41...55)) }
            }
        }
    }
}

extension RedisServer {
    /// How many times Redis ran `command` so far (`INFO commandstats`; calls from scripts included).
    func calls(of command: String) async throws -> Int {
        let info = try await run(["INFO", "commandstats"]).string ?? ""
        guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(command):") }),
              let calls = line.split(separator: ",").first?.split(separator: "=").last else { return 0 }
        return Int(calls) ?? 0
    }
}
