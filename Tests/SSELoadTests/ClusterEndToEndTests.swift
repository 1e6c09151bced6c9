import Testing
@testable import SSELoad
import TestSupport

/// The load engine against two real gateways (child processes) sharing one real
/// redis-server: what is published on one node is counted on the other.
@Suite(.serialized) struct ClusterEndToEndTests {
    /// Runs `body` with the ports of two gateways started with `--redis` on one fresh Redis,
    /// once both answer `/readyz` with 200 (a gateway listens before its Redis connection is
    /// up, and answers 503 until it is).
    private func withCluster(_ body: (_ ports: [Int]) async throws -> Void) async throws {
        let redis = try await RedisServer.start()
        do {
            try await withGatewayProcess(["--shutdown-grace", "400ms", "--redis", redis.url]) { first in
                try await withGatewayProcess(["--shutdown-grace", "400ms", "--redis", redis.url]) { second in
                    for gateway in [first, second] {
                        let deadline = ContinuousClock.now + .seconds(10)
                        while try await gateway.send("GET", "/readyz").status != 200 {
                            guard ContinuousClock.now < deadline else { throw HarnessFailure("/readyz never 200") }
                            try await Task.sleep(for: .milliseconds(20))
                        }
                    }
                    try await body([first.port, second.port])
                }
            }
        } catch {
            await redis.stop()
            throw error
        }
        await redis.stop()
    }

    private func cluster(_ ports: [Int], _ change: (inout LoadConfiguration) -> Void) -> LoadConfiguration {
        var configuration = quickConfiguration(port: ports[0], change)
        configuration.targets = ports.map { LoadTarget(host: "127.0.0.1", port: $0, basePath: "") }
        return configuration
    }

    /// 40 subscribers split over two nodes, 30 publishes on the first: every subscriber gets all 30, none lost,
    /// doubled or reordered, and half of them got them from the node that was not published to.
    @Test func publishesOnOneNodeReachSubscribersOfBoth() async throws {
        try await withCluster { ports in
            let configuration = cluster(ports) {
                $0.subscribers = 40
                $0.topics = 1
                $0.publishers = 2
                $0.rate = 0
                $0.publishLimit = 30
                $0.topicPrefix = "e2e/cluster/first"
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.connectionsEstablished == 40)
            #expect(report.connectionsPerURL == [20, 20])
            #expect(report.publishesAcked == 30)
            #expect(report.expectedDeliveries == 40 * 30)
            #expect(report.eventsReceived == 40 * 30)
            #expect(report.loss == 0)
            #expect(report.duplicates == 0 && report.outOfOrder == 0)
            #expect(report.notOnLatest == 0)
            #expect(report.latency.count == 40 * 30)
            #expect(report.firstError == nil)
            #expect(report.jsonLine.contains("\"urls\":[\"http://127.0.0.1:\(ports[0])\",\"http://127.0.0.1:\(ports[1])\"]"))
        }
    }

    /// Publishers on both nodes (`--publish-to all`), subscribers over 3 topics on both: exact counts, in order.
    @Test func publishersOnEveryNode() async throws {
        try await withCluster { ports in
            let configuration = cluster(ports) {
                $0.subscribers = 60
                $0.topics = 3
                $0.publishers = 4
                $0.publishTo = .all
                $0.rate = 400
                $0.publishLimit = 60
                $0.topicPrefix = "e2e/cluster/all"
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.connectionsPerURL == [30, 30])
            #expect(report.publishesAcked == 60)
            #expect(report.expectedDeliveries == 60 * 20)
            #expect(report.eventsReceived == 60 * 20)
            #expect(report.loss == 0)
            #expect(report.duplicates == 0 && report.outOfOrder == 0)
            #expect(report.firstError == nil)
        }
    }
}
