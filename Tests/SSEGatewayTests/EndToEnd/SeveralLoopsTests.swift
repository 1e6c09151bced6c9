import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// A gateway on two event loops (`--loops 2`): connections on both, topics in two
/// shards, and what a client sees unchanged. (The other end-to-end suites run with
/// `SSE_GATEWAY_LOOPS` 1 and 2 in scripts/test.sh; these pin 2 whatever it says.)
struct SeveralLoopsTests {
    /// Runs `body` against an in-memory gateway with two loops (the shards are what is tested).
    static func withTwoLoops(_ body: (RunningGateway) async throws -> Void) async throws {
        try await withGateway(backend: .memory, { $0.loops = 2 }, body)
    }

    /// A topic name the in-memory engine keeps in `shard`.
    static func name(in shard: Int, of engine: ShardedHub, prefix: String) -> String {
        (0...).lazy.map { "\(prefix)-\($0)" }.first { engine.shardIndex(of: $0) == shard }!
    }

    /// Subscribers of two topics kept on different loops, their connections spread over
    /// both: every one gets every event once, in order, with its ids; gauges back to 0.
    @Test func everySubscriberOnEveryLoopGetsEveryEvent() async throws {
        try await Self.withTwoLoops { gateway in
            #expect(gateway.gateway.loops.count == 2)
            let engine = try #require(gateway.gateway.engine as? ShardedHub)
            let topics = [Self.name(in: 0, of: engine, prefix: "left"), Self.name(in: 1, of: engine, prefix: "right")]
            var streams: [(topic: String, stream: SSETestClient)] = []
            for index in 0..<16 {
                let topic = topics[index % 2]
                streams.append((topic, try await gateway.subscribe("/events/\(topic)")))
            }
            defer { for (_, stream) in streams { stream.close() } }
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 16, within: 10) == 16)
            for round in 1...25 {
                for topic in topics { _ = try await gateway.publish("/events/\(topic)", "\(topic)-\(round)") }
            }
            for (topic, stream) in streams {
                let events = try await stream.next(25, within: 10)
                #expect(events.map(\.data) == (1...25).map { "\(topic)-\($0)" })
                #expect(events.map(\.id) == (1...25).map { "\($0)" })
            }
            for (_, stream) in streams { stream.close() }
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 0, within: 10) == 0)
        }
    }

    /// One stream of three topics kept on two loops: the current values in parameter order
    /// (though the first loop's two come before the other's), then the changes, then gone
    /// from every topic when it closes.
    @Test func aStreamOfTopicsOnBothLoops() async throws {
        try await Self.withTwoLoops { gateway in
            let engine = try #require(gateway.gateway.engine as? ShardedHub)
            let a = Self.name(in: 0, of: engine, prefix: "a")
            let b = Self.name(in: 1, of: engine, prefix: "b")
            let c = Self.name(in: 0, of: engine, prefix: "c")
            for topic in [a, b, c] { _ = try await gateway.publish("/state/\(topic)", "\(topic)-1") }
            let stream = try await gateway.subscribe("/state?topic=\(a)&topic=\(b)&topic=\(c)")
            defer { stream.close() }
            func json(_ topic: String, _ id: Int) -> String { "{\"topic\":\"\(topic)\",\"id\":\"\(id)\",\"data\":\"\(topic)-\(id)\"}" }
            #expect(try await stream.next(3, within: 10).map(\.data) == [json(a, 1), json(b, 1), json(c, 1)])
            _ = try await gateway.publish("/state/\(b)", "\(b)-2")
            _ = try await gateway.publish("/state/\(a)", "\(a)-2")
            #expect(try await stream.next(2, within: 10).map(\.data) == [json(b, 2), json(a, 2)])
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"state\"}", toBe: 1, within: 10) == 1)
            stream.close()
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"state\"}", toBe: 0, within: 10) == 0)
            for topic in [a, b, c] { #expect(await engine.subscriberCount(topic: topic, channel: .state) == 0) }
        }
    }
}
