import Foundation
import HTTPCore
import Testing
import TestSupport
@testable import SSEGateway

/// Gateways given one Redis, over real sockets: one gateway to clients; Redis's
/// absence answered with 503s while open streams stay (API.md, "A cluster of gateways on Redis").
/// On one redis-server, or on a Redis Cluster of three masters with `SSE_TEST_BACKEND=redis-cluster`
/// (`SharedRedis`): every test holds on both.
@Suite(.timeLimit(.minutes(1)))
struct ClusterGatewayTests {
    /// Runs two gateways on one fresh Redis (a Redis Cluster with `SSE_TEST_BACKEND=redis-cluster`).
    private func withTwoGateways(over transport: Transport = .plain,
                                 _ configure: @escaping (inout GatewayConfiguration) -> Void = { _ in },
                                 _ body: (SharedRedis, RunningGateway, RunningGateway) async throws -> Void) async throws {
        let redis = try await SharedRedis.start()
        let a = try await RunningGateway.start(over: transport, sharing: redis, configure)
        let b = try await RunningGateway.start(over: transport, sharing: redis, configure)
        do {
            try await body(redis, a, b)
        } catch {
            await a.stop(); await b.stop(); await redis.stop()
            throw error
        }
        await a.stop(); await b.stop(); await redis.stop()
    }

    /// Published on one gateway, received on the other; resumed on the first; counted on both; over plain and TLS.
    @Test(arguments: Transport.allCases)
    func twoGatewaysAreOneToClients(_ transport: Transport) async throws {
        try await withTwoGateways(over: transport) { _, a, b in
            let events = try await b.subscribe("/events/chat/room-1")
            let state = try await b.subscribe("/state/chat/room-1")
            #expect(try await a.publish("/events/chat/room-1?event=message", "hello") == 1)
            #expect(try await a.publish("/state/chat/room-1", "on") == 1)
            let event = try await events.next()
            #expect(event?.id == "1" && event?.event == "message" && event?.data == "hello")
            #expect(try await state.next()?.data == "on")
            #expect(try await a.publish("/events/chat/room-1", "two") == 2)
            #expect(try await events.next()?.id == "2")
            // EventSource reconnecting to the other gateway.
            let resumed = try await a.subscribe("/events/chat/room-1", headers: [("Last-Event-ID", "1")])
            #expect(try await resumed.next()?.data == "two")
            // The reply counts both gateways' subscribers: A's own at once, B's within a second.
            #expect(try await eventually {
                let reply = try await a.post("/events/chat/room-1", "count")
                let object = try JSONSerialization.jsonObject(with: Data(reply.body)) as? [String: Any]
                return object?["subscribers"] as? Int == 2
            })
            events.close()
            resumed.close(); state.close()
        }
    }

    /// Redis away (every node of a Redis Cluster): /readyz and every publish or new subscription answer 503 with
    /// Retry-After within a second, /healthz stays 200, open streams keep their heartbeats; Redis back (with its
    /// data): ready, and the stream gets what it missed.
    @Test func redisAwayAndBack() async throws {
        try await withTwoGateways({ $0.heartbeatInterval = .milliseconds(300) }) { redis, a, b in
            #expect(try await a.send("GET", "/readyz").status == 200)
            let open = try await a.subscribe("/events/alerts")
            #expect(try await b.publish("/events/alerts", "one") == 1)
            #expect(try await open.next()?.data == "one")
            #expect(try await a.metrics()["sse_gateway_redis_up"] == 1)

            try await redis.kill()
            let asked = ContinuousClock.now
            let refused = try await a.post("/events/alerts", "lost")
            #expect(refused.status == 503 && refused.head.headers["Retry-After"] != nil)
            #expect(ContinuousClock.now - asked < .seconds(1))
            #expect(try await a.send("GET", "/events/alerts").status == 503)
            #expect(try await eventually { try await a.send("GET", "/readyz").status == 503 })
            #expect(try await a.send("GET", "/healthz").status == 200)
            #expect(try await a.metrics()["sse_gateway_redis_up"] == 0)
            let beats = open.comments
            #expect(try await open.staysQuiet(for: 2.5))
            #expect(open.comments > beats, "no heartbeat while Redis was away")

            try await redis.start(keepData: true)
            #expect(try await eventually(within: 10) { try await a.send("GET", "/readyz").status == 200 })
            #expect(try await eventually(within: 10) { try await b.send("GET", "/readyz").status == 200 })
            #expect(try await b.publish("/events/alerts", "two") == 2)
            let next = try await open.next()
            #expect(next?.id == "2" && next?.data == "two")
            #expect(try await a.metrics()["sse_gateway_redis_reconnects_total"] ?? 0 >= 1)
            open.close()
        }
    }

    /// A resume older than the shared window gets `gap`, counted in sse_gateway_gap_events_total.
    @Test func gapAcrossGatewaysIsCounted() async throws {
        try await withTwoGateways({ $0.replayCount = 2 }) { _, a, b in
            for index in 1...6 { _ = try await a.publish("/events/g", "e\(index)") }
            let resumed = try await b.subscribe("/events/g", headers: [("Last-Event-ID", "1")])
            let gap = try await resumed.next()
            #expect(gap?.event == "gap" && gap?.data == "2")
            #expect(try await resumed.next()?.id == "5")
            #expect(try await b.metrics()["sse_gateway_gap_events_total"] == 1)
            resumed.close()
        }
    }

    /// EventSources resuming with `Last-Event-ID` on topics Redis holds nothing for: each stream starts
    /// as soon as the raised ids are mirrored and goes on past the id it had, and no topic goes live short
    /// of its fence. (Before, the topic's first sync could run in Redis ahead of the raise; the topic went
    /// live on it, and about one resume in eight waited out the fence's 500 ms, counted in
    /// `sse_gateway_redis_fences_overdue_total`.)
    @Test func resumesOnTopicsRedisHoldsNothingForAreNotOverdue() async throws {
        try await withTwoGateways { _, a, b in
            #expect(try await a.metrics()["sse_gateway_redis_fences_overdue_total"] == 0)
            for index in 0..<100 {
                let resumed = try await a.subscribe("/events/resumed-\(index)", headers: [("Last-Event-ID", "41")])
                if index % 25 == 0 {
                    #expect(try await b.publish("/events/resumed-\(index)", "next") == 42)
                    #expect(try await resumed.next()?.id == "42")
                }
                resumed.close()
            }
            #expect(try await a.metrics()["sse_gateway_redis_fences_overdue_total"] == 0)
        }
    }

    /// Redis back empty (on Redis Cluster, the master serving the topic, alone): `/readyz` tells the
    /// truth throughout — whenever it says 200 a publish is served, and during the pause while the ids
    /// are restored it is 503 saying so, as the refused publishes do; then both gateways serve again,
    /// with ids going on.
    @Test func readyzTellsTheTruthAfterAnEmptyRestart() async throws {
        try await withTwoGateways { redis, a, b in
            let open = try await b.subscribe("/events/truth")  // B holds the topic: its ids go on.
            defer { open.close() }
            #expect(try await a.publish("/events/truth", "one") == 1)
            #expect(try await open.next()?.id == "1")
            try await redis.kill(topic: "truth")
            try await redis.start(keepData: false)
            var sawPause = false
            var served: UInt64?
            let deadline = ContinuousClock.now + .seconds(15)
            while served == nil, ContinuousClock.now < deadline {
                // A publish between two /readyz answers that agree must agree with them
                // (the state may change between a check and a publish: that is no lie).
                let before = try await a.send("GET", "/readyz")
                let reply = try await a.post("/events/truth", "two")
                let after = try await a.send("GET", "/readyz")
                for ready in [before, after] where ready.status != 200 {
                    #expect(ready.status == 503 && ready.text.hasPrefix("not ready: "), "\(ready.text)")
                }
                if before.status == 200, after.status == 200 {
                    #expect(reply.status == 200, "/readyz said ready, the publish got \(reply.status): \(reply.text)")
                }
                let pausedBefore = before.text.contains("may have lost data")
                let pausedAfter = after.text.contains("may have lost data")
                if pausedBefore || pausedAfter { sawPause = true }
                if pausedBefore, pausedAfter {
                    #expect(reply.status == 503 && reply.text.contains("may have lost data"), "\(reply.text)")
                }
                if reply.status == 200 { served = KeepAlivePublisher.id(in: reply.body) }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(sawPause, "/readyz never reported the pause while the ids were restored")
            #expect(served == 2)
            #expect(try await eventually(within: 5) { try await b.send("GET", "/readyz").status == 200 })
        }
    }

    /// Without --redis, /readyz is always 200 and no Redis metric is exported.
    @Test func inMemoryIsAlwaysReady() async throws {
        let gateway = try await RunningGateway.start(backend: .memory)
        #expect(try await gateway.send("GET", "/readyz").status == 200)
        #expect(try await gateway.metrics()["sse_gateway_redis_up"] == nil)
        #expect(try await gateway.metrics()["sse_gateway_gap_events_total"] == 0)
        await gateway.stop()
    }
}

/// Polls `condition` for up to `seconds`.
func eventually(within seconds: Double = 5, _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    repeat {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(100))
    } while ContinuousClock.now < deadline
    return false
}
