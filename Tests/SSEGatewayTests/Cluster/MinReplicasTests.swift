import Foundation
import Testing
import TestSupport
@testable import SSEGateway

/// `--redis-min-replicas N`: a publish is acknowledged only once N replicas hold it
/// (a real master and replica, or with `SSE_TEST_BACKEND=redis-cluster` a Redis Cluster of three
/// masters with a replica each, the topic's master and its replica; the replica stopped with
/// SIGSTOP to make it fall silent).
@Suite(.timeLimit(.minutes(1)))
struct MinReplicasTests {
    /// With its replica answering, publishes get 200; with the replica silent, 503 within a second,
    /// saying that too few replicas confirmed (and `/readyz` stays 200: subscribing still works);
    /// with the replica back, 200 again and the ids go on. Asking for 2 replicas of a master that has
    /// one refuses every publish, naming the count.
    @Test func publishesWaitForTheirReplicas() async throws {
        let redis = try await SharedRedis.start(replicas: true)
        let replica = try await redis.replica(of: "safe")
        let one = try await RunningGateway.start(sharing: redis) { $0.redisMinReplicas = 1 }
        let two = try await RunningGateway.start(sharing: redis) { $0.redisMinReplicas = 2 }
        do {
            #expect(try await one.publish("/events/safe", "a") == 1)
            let refusedForTwo = try await two.post("/events/safe", "never acknowledged")
            #expect(refusedForTwo.status == 503 && refusedForTwo.text.contains("only 1 of the 2 replicas"), "\(refusedForTwo.text)")

            replica.pause()
            let asked = ContinuousClock.now
            let refused = try await one.post("/events/safe", "b")
            #expect(refused.status == 503 && refused.head.headers["Retry-After"] != nil)
            #expect(refused.text.contains("only 0 of the 1 replicas"), "\(refused.text)")
            // Within about one WAIT (500 ms), not the command timeout after it (1.25 s in
            // all); 1.004 s was seen in the parallel pass on a slow day.
            #expect(ContinuousClock.now - asked < .milliseconds(1200))
            #expect(try await one.send("GET", "/readyz").status == 200)

            replica.resume()
            var id: UInt64?
            #expect(try await eventually(within: 10) {
                let reply = try await one.post("/events/safe", "c")
                id = KeepAlivePublisher.id(in: reply.body)
                return reply.status == 200
            })
            // The refused ones were stored on the master all the same (it says so): the ids go on after them.
            #expect((id ?? 0) > 3)
        } catch {
            await one.stop(); await two.stop(); await redis.stop()
            throw error
        }
        await one.stop(); await two.stop(); await redis.stop()
    }
}
