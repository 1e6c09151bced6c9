import HTTPCore
import Testing
@testable import StreamHub

/// The in-memory engine over several shards (`--loops N`): each topic in one shard,
/// every promise of the hub unchanged, several-topic streams spanning shards.
struct ShardedHubTests {
    /// Two shards on queues of their own, or on two event loops as the gateway runs them.
    static func makeEngine(onLoops: Bool, _ change: (inout HubConfiguration) -> Void = { _ in }) -> ShardedHub {
        let executors: [any SerialExecutor] = onLoops
            ? EventLoop.loops(2).map(\.actorExecutor)
            : [QueueExecutor(label: "shard-0"), QueueExecutor(label: "shard-1")]
        return ShardedHub(configuration: .testing(change), executors: executors)
    }

    /// `count` topic names the engine puts in shard 0, then as many in shard 1.
    static func names(_ engine: ShardedHub, perShard count: Int) -> (first: [String], second: [String]) {
        var first: [String] = []
        var second: [String] = []
        var index = 0
        while first.count < count || second.count < count {
            let name = "topic-\(index)"
            index += 1
            if engine.shardIndex(of: name) == 0 {
                if first.count < count { first.append(name) }
            } else if second.count < count {
                second.append(name)
            }
        }
        return (first, second)
    }

    /// A topic's shard is FNV-1a of its UTF-8 bytes modulo the shard count, as documented, so
    /// the same name lands on the same shard in every run and every build: checked against
    /// FNV-1a's published value of "a" (0xaf63dc4c8601ec8c) and a hash worked out byte by byte
    /// here, for ASCII, non-ASCII and long names and one made from a slice of a larger string.
    /// (On Linux every string has contiguous UTF-8, so the shard's fallback for one that has
    /// not is not reached here.)
    @Test func aTopicsShardIsFNV1aOfItsBytes() {
        func fnv1a(_ name: String) -> UInt64 {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in Array(name.utf8) { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            return hash
        }
        #expect(fnv1a("a") == 0xaf63_dc4c_8601_ec8c)
        let three = ShardedHub(executors: (0..<3).map { QueueExecutor(label: "shard-\($0)") })
        let sliced = String("xx-publish-only/17-yy".dropFirst(3).dropLast(3))
        let names = ["a", "publish-only/17", "héllo/wörld", String(repeating: "long-", count: 40), sliced]
        for name in names {
            #expect(three.shardIndex(of: name) == Int(fnv1a(name) % 3), "\(name)")
        }
        #expect(Set(names.map(three.shardIndex(of:))).count > 1, "the names spread over the shards")
    }

    /// Subscribers in the tables of all shards, without applying pending removals.
    static func registered(_ engine: ShardedHub) async -> Int {
        var total = 0
        for hub in engine.shards { total += await hub.registeredSubscribers() }
        return total
    }

    /// A topic's ids, values and subscribers live in its one shard; the shard is the same for a name every time.
    @Test(arguments: [false, true]) func eachTopicLivesInOneShard(onLoops: Bool) async throws {
        let engine = Self.makeEngine(onLoops: onLoops)
        let (first, second) = Self.names(engine, perShard: 1)
        let a = try await engine.subscribe(topic: first[0], channel: .events, lastEventID: nil)
        let b = try await engine.subscribe(topic: second[0], channel: .events, lastEventID: nil)
        for index in 1...3 {
            #expect(try await engine.publish(topic: first[0], channel: .events, data: "a\(index)", event: nil).id == UInt64(index))
            #expect(try await engine.publish(topic: second[0], channel: .events, data: "b\(index)", event: nil).id == UInt64(index))
        }
        #expect(try await a.receive(3).map(\.data) == ["a1", "a2", "a3"])
        #expect(try await b.receive(3).map(\.data) == ["b1", "b2", "b3"])
        #expect(await engine.shards[0].lastIDs(topic: first[0]) == (0, 3))
        #expect(await engine.shards[1].lastIDs(topic: first[0]) == (0, 0))
        #expect(await engine.shards[1].lastIDs(topic: second[0]) == (0, 3))
        #expect(await engine.snapshot() == HubSnapshot(topics: 2, stateSubscribers: 0, eventsSubscribers: 2))
        #expect(engine.shardIndex(of: first[0]) == ShardedHub(executors: [QueueExecutor(label: "x"), QueueExecutor(label: "y")])
            .shardIndex(of: first[0]))
        a.cancel()
        b.cancel()
        #expect(await engine.snapshot().eventsSubscribers == 0)
        #expect(engine.counters.subscribers(.events) == 0)
    }

    /// A several-topic stream over both shards: every topic's snapshot, then every
    /// topic's live values, as one subscriber counted once; gone from both shards' tables when it ends.
    @Test(arguments: [false, true]) func aStreamAcrossShards(onLoops: Bool) async throws {
        let engine = Self.makeEngine(onLoops: onLoops)
        let (first, second) = Self.names(engine, perShard: 2)
        let topics = [first[0], second[0], first[1], second[1]]
        for name in topics { _ = try await engine.publish(topic: name, channel: .state, data: "old-\(name)", event: nil) }
        let sub = try await engine.subscribe(topics: .tagged(topics), channel: .state, resumeAfter: nil)
        #expect(sub.startPositions == [1, 1, 1, 1])
        // In parameter order, though shard 0 (slots 0 and 2) queued its values before shard 1.
        let snapshot = try await sub.receiveValues(4)
        #expect(snapshot.map(\.0.data) == topics.map { "old-\($0)" })
        #expect(await engine.snapshot() == HubSnapshot(topics: 4, stateSubscribers: 1, eventsSubscribers: 0))
        #expect(engine.counters.subscribers(.state) == 1)
        for name in topics {
            #expect(try await engine.publish(topic: name, channel: .state, data: "new-\(name)", event: nil).subscribers == 1)
        }
        let live = try await sub.receiveValues(4)
        #expect(live.map(\.0) == topics.map { TopicValue(topic: $0, id: 2, data: "new-\($0)") })
        #expect(live.map(\.1.slot) == [0, 1, 2, 3])
        sub.cancel()
        #expect(engine.counters.subscribers(.state) == 0)
        try await waitUntil { await Self.registered(engine) == 0 }
        for name in topics { #expect(await engine.subscriberCount(topic: name, channel: .state) == 0) }
    }

    /// Resuming across shards: each topic replays after its own position, from its own shard.
    @Test func resumeAcrossShards() async throws {
        let engine = Self.makeEngine(onLoops: true)
        let (first, second) = Self.names(engine, perShard: 1)
        for index in 1...3 {
            _ = try await engine.publish(topic: first[0], channel: .events, data: "a\(index)", event: nil)
            _ = try await engine.publish(topic: second[0], channel: .events, data: "b\(index)", event: nil)
        }
        let sub = try await engine.subscribe(topics: [first[0], second[0]], channel: .events, resumeAfter: [1, 2])
        #expect(sub.startPositions == [1, 2])
        let values = try await sub.receiveValues(3).map(\.0.data)
        #expect(values.filter { $0.hasPrefix("a") } == ["a2", "a3"])
        #expect(values.filter { $0.hasPrefix("b") } == ["b3"])
        sub.cancel()
    }

    /// A several-topic subscriber that falls behind in one shard is disconnected and
    /// leaves the other shard's tables too: counts back to zero everywhere.
    @Test(arguments: [false, true]) func anOverflowInOneShardLeavesBoth(onLoops: Bool) async throws {
        let engine = Self.makeEngine(onLoops: onLoops) { $0.eventsQueueLimit = 4 }
        let (first, second) = Self.names(engine, perShard: 1)
        let sub = try await engine.subscribe(topics: [first[0], second[0]], channel: .events, resumeAfter: nil)
        for index in 1...5 { _ = try await engine.publish(topic: first[0], channel: .events, data: "\(index)", event: nil) }
        #expect(sub.finishReason == .overflow)
        #expect(engine.counters.subscribers(.events) == 0)
        try await waitUntil { await Self.registered(engine) == 0 }
        #expect(try await engine.publish(topic: second[0], channel: .events, data: "later", event: nil).subscribers == 0)
        #expect(await engine.snapshot().eventsSubscribers == 0)
    }

    /// Shutting down finishes subscribers of every shard, and later calls are refused in each.
    @Test func shutdownReachesEveryShard() async throws {
        let engine = Self.makeEngine(onLoops: true)
        let (first, second) = Self.names(engine, perShard: 1)
        let a = try await engine.subscribe(topic: first[0], channel: .state, lastEventID: nil)
        let both = try await engine.subscribe(topics: [first[0], second[0]], channel: .events, resumeAfter: nil)
        await engine.shutdown()
        #expect(a.finishReason == .shutdown)
        #expect(both.finishReason == .shutdown)
        #expect(engine.counters.subscribers(.state) == 0 && engine.counters.subscribers(.events) == 0)
        await #expect(throws: PublishError.shutdown) {
            try await engine.publish(topic: second[0], channel: .events, data: "x", event: nil)
        }
        let late = try await engine.subscribe(topics: [first[0], second[0]], channel: .events, resumeAfter: nil)
        #expect(late.finishReason == .shutdown)
        #expect(engine.counters.subscribers(.events) == 0)
    }
}

/// Polls `condition` every 5 ms for up to 5 s: a shard drops a cancelled subscriber's
/// registration on its own executor and tells no one (this module does not link
/// TestSupport's `eventually(upTo:)`, the same poll).
func waitUntil(_ condition: () async -> Bool) async throws {
    let deadline = ContinuousClock.now + .seconds(5)
    while !(await condition()) {
        guard ContinuousClock.now < deadline else {
            Issue.record("condition not met within 5 s")
            return
        }
        try await Task.sleep(for: .milliseconds(5))
    }
}
