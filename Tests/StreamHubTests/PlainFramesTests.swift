import Testing
@testable import StreamHub

/// A one-topic stream (one `.plain` slot) writes the topic's own SSE frames, byte for
/// byte what single-topic streams always wrote, with no marks: the one subscription
/// model changed nothing a `/events/<topic>` or `/state/<topic>` reader sees.
struct PlainFramesTests {
    /// Live events, a resume's replay and its gap are the exact bytes of `id:`/`event:`/`data:` frames, unmarked.
    @Test func eventsBytesAreTheTopicsOwn() async throws {
        let hub = Hub(configuration: .testing { $0.replayCount = 2 })
        for index in 1...3 { _ = try await hub.publish(topic: "t", channel: .events, data: "v\(index)") }
        let resumed = await hub.subscribe(topics: .single("t"), channel: .events, resumeAfter: [0])
        #expect(resumed.startPositions == [0])
        let first = try #require(await resumed.nextMarkedBatch())
        #expect(first.marks.isEmpty)
        #expect(first.frames.map { String(decoding: $0, as: UTF8.self) }
            == ["event: gap\ndata: 1\n\n", "id: 2\ndata: v2\n\n", "id: 3\ndata: v3\n\n"])
        _ = try await hub.publish(topic: "t", channel: .events, data: "a\nb", event: "tick")
        let live = try #require(await resumed.nextMarkedBatch())
        #expect(live.marks.isEmpty)
        #expect(live.frames.map { String(decoding: $0, as: UTF8.self) } == ["id: 4\nevent: tick\ndata: a\ndata: b\n\n"])
    }

    /// A state subscriber's first frame is the current value's own frame, then each change's.
    @Test func stateBytesAreTheTopicsOwn() async throws {
        let hub = Hub(configuration: .testing())
        _ = try await hub.publish(topic: "s", channel: .state, data: "one")
        let sub = await hub.subscribe(topic: "s", channel: .state)
        #expect(sub.startPositions == [1])
        #expect(await sub.nextBatch()?.map { String(decoding: $0, as: UTF8.self) } == ["id: 1\ndata: one\n\n"])
        _ = try await hub.publish(topic: "s", channel: .state, data: "two", event: "e")
        #expect(await sub.nextBatch()?.map { String(decoding: $0, as: UTF8.self) } == ["id: 2\nevent: e\ndata: two\n\n"])
    }
}
