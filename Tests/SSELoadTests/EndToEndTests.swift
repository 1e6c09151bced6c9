import Glibc
import HTTPCore
import StreamHub
import Testing
@testable import SSELoad
import TestSupport

/// The load engine against the real gateway (a child process), over real sockets.
/// One at a time: each holds tens of connections on a shared 2-core machine.
@Suite(.serialized) struct EndToEndTests {
    /// 50 subscribers on one topic and 40 publishes give exactly 50 × 40 deliveries, none lost, doubled or reordered.
    @Test func everyPublishReachesEverySubscriberExactlyOnce() async throws {
        try await withGateway { port in
            let configuration = quickConfiguration(port: port) {
                $0.subscribers = 50
                $0.topics = 1
                $0.publishers = 4
                $0.rate = 0
                $0.publishLimit = 40
                $0.topicPrefix = "e2e/exact"
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.connectionsEstablished == 50)
            #expect(report.connectionsFailed == 0)
            #expect(report.publishesAttempted == 40)
            #expect(report.publishesAcked == 40)
            #expect(report.publishesFailed == 0)
            #expect(report.expectedDeliveries == 50 * 40)
            #expect(report.serverCountedDeliveries == 50 * 40)
            #expect(report.subscriberCountMismatches == 0)
            #expect(report.eventsReceived == 50 * 40)
            #expect(report.loss == 0)
            #expect(report.duplicates == 0)
            #expect(report.outOfOrder == 0)
            #expect(report.unrecognizedEvents == 0)
            #expect(report.endedEarly == 0)
            #expect(report.notOnLatest == 0)
            #expect(report.latency.count == 50 * 40)
            #expect(report.firstError == nil)
        }
    }

    /// Subscribers spread over topics get only their topic's publishes: 60 subscribers, 3 topics, 30 publishes give 600.
    @Test func deliveriesFollowTopics() async throws {
        try await withGateway { port in
            let configuration = quickConfiguration(port: port) {
                $0.subscribers = 60
                $0.topics = 3
                $0.publishers = 2
                $0.rate = 300
                $0.publishLimit = 30
                $0.ramp = .milliseconds(200)
                $0.topicPrefix = "e2e/topics"
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.publishesAcked == 30)
            #expect(report.expectedDeliveries == 600)
            #expect(report.eventsReceived == 600)
            #expect(report.loss == 0)
            #expect(report.duplicates == 0 && report.outOfOrder == 0)
        }
    }

    /// On /state every subscriber ends on its topic's newest value, values never go backwards, and loss is not counted.
    @Test func stateSubscribersEndOnTheNewestValue() async throws {
        try await withGateway { port in
            let configuration = quickConfiguration(port: port) {
                $0.channel = .state
                $0.subscribers = 20
                $0.topics = 2
                $0.publishers = 2
                $0.rate = 0
                $0.publishLimit = 200
                $0.topicPrefix = "e2e/state"
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.publishesAcked == 200)
            #expect(report.notOnLatest == 0)
            #expect(report.outOfOrder == 0)
            #expect(report.duplicates == 0)
            #expect(report.loss == nil)
            #expect(report.eventsReceived > 0 && report.eventsReceived <= report.expectedDeliveries)
            #expect(report.jsonLine.contains("\"loss\":null"))
        }
    }

    /// A stalled /state reader (reads nothing while 500 values are published) still ends on the newest value.
    @Test func aStalledStateReaderEndsOnTheNewestValue() async throws {
        try await withGateway { port in
            let configuration = quickConfiguration(port: port) {
                $0.channel = .state
                $0.subscribers = 1
                $0.topics = 1
                $0.publishers = 2
                $0.rate = 0
                $0.publishLimit = 500
                $0.stallAfter = 0
                $0.topicPrefix = "e2e/stalled"
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.publishesAcked == 500)
            #expect(report.connectionsEstablished == 1)
            #expect(report.endedEarly == 0)
            #expect(report.notOnLatest == 0)
            #expect(report.outOfOrder == 0 && report.duplicates == 0)
            #expect(report.eventsReceived >= 1 && report.eventsReceived <= 500)
        }
    }

    /// Streams the server ends while the run goes on are reported as early disconnects.
    @Test func streamsEndingDuringTheRunAreCounted() async throws {
        let gateway = try await GatewayProcess.start(["--shutdown-grace", "400ms"])
        let load = quickConfiguration(port: gateway.port) {
            $0.subscribers = 10
            $0.topics = 1
            $0.publishers = 0
            $0.duration = .seconds(30)  // ends early: the streams end, then the hold is cut short below
            $0.topicPrefix = "e2e/ended"
        }
        let engine = try LoadRun(configuration: load)
        async let report = engine.run()
        // Stop the gateway once every subscriber is registered (however slow the machine is).
        _ = try await gateway.waitForMetric(#"sse_gateway_subscribers{channel="events"}"#, toBe: 10, within: 30)
        gateway.child.send(SIGTERM)
        let finished = await report
        _ = await gateway.child.waitForExit(upTo: 10)
        await gateway.child.stop()
        #expect(finished.connectionsEstablished == 10)
        #expect(finished.endedEarly == 10)
        #expect(finished.jsonLine.contains("\"slow_subscriber_disconnects\":10"))
    }

    /// Nothing listening: every subscriber is a failed connection and every publish a failed publish, and the run still ends.
    @Test func refusedConnectionsAreCountedAsFailures() async throws {
        // Run a gateway on an ephemeral port and stop it, so nothing listens there.
        let gateway = try await GatewayProcess.start()
        let port = gateway.port
        await gateway.child.stop()
        let configuration = quickConfiguration(port: port) {
            $0.subscribers = 5
            $0.publishers = 1
            $0.rate = 0
            $0.publishLimit = 3
            $0.settle = .zero
        }
        let report = try await LoadRun(configuration: configuration).run()
        #expect(report.connectionsEstablished == 0)
        #expect(report.connectionsFailed == 5)
        #expect(report.publishesAcked == 0)
        #expect(report.publishesFailed == 3)
        #expect(report.firstError != nil)
    }
}
