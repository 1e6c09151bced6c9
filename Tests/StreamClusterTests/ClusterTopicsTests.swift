@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// Several topics in one stream on the cluster engine: every topic fenced, one hub call.
struct ClusterTopicsTests {
    /// A several-topic subscriber on one gateway gets every topic's values published on another, each once and in order; it resumes per topic on the other gateway.
    @Test func severalTopicsAcrossGateways() async throws {
        try await withCluster { _, engines in
            let (a, b) = (engines[0], engines[1])
            _ = try await b.publish("t/1", .events, "before")
            let names = ["t/1", "t/2", "t/3"]
            let sub = try await a.engine.subscribe(topics: .tagged(names), channel: .events, resumeAfter: nil)
            #expect(sub.startPositions == [1, 0, 0])
            for index in 1...20 {
                for name in names { _ = try await b.publish(name, .events, "\(name)#\(index)") }
            }
            var marks: [FrameMark] = []
            while marks.count < 60, let batch = await sub.nextMarkedBatch() { marks += batch.marks.filter { $0.id > 0 } }
            for slot in 0..<3 {
                let expected = slot == 0 ? Array(2...21) : Array(1...20)
                #expect(marks.filter { $0.slot == slot }.map(\.id) == expected.map { UInt64($0) })
            }
            sub.cancel()
            // Resuming on the other gateway from (11, 10, 0): the rest of each topic.
            let resumed = try await b.engine.subscribe(topics: .tagged(names), channel: .events, resumeAfter: [11, 10, 0])
            var again: [FrameMark] = []
            while again.count < 10 + 10 + 20, let batch = await resumed.nextMarkedBatch() { again += batch.marks }
            #expect(again.filter { $0.slot == 0 }.map(\.id) == (12...21).map { UInt64($0) })
            #expect(again.filter { $0.slot == 1 }.map(\.id) == (11...20).map { UInt64($0) })
            #expect(again.filter { $0.slot == 2 }.map(\.id) == (1...20).map { UInt64($0) })
            resumed.cancel()
        }
    }

    /// State on several topics: the current value of each, fenced against what another gateway acknowledged.
    @Test func stateOfSeveralTopicsIsCurrent() async throws {
        try await withCluster { _, engines in
            let (a, b) = (engines[0], engines[1])
            _ = try await b.publish("s/1", .state, "one")
            _ = try await b.publish("s/2", .state, "two")
            _ = try await b.publish("s/2", .state, "two again")
            let sub = try await a.engine.subscribe(topics: ["s/2", "s/0", "s/1"], channel: .state, resumeAfter: nil)
            let batch = try #require(await sub.nextMarkedBatch())
            #expect(batch.frames == [
                TopicFrameEncoder.event(topic: "s/2", id: 2, event: nil, data: "two again"),
                TopicFrameEncoder.event(topic: "s/1", id: 1, event: nil, data: "one"),
            ])
            sub.cancel()
        }
    }
}
