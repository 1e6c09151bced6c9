import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// Issue 16: the event loop writes subscribers' frames itself at the end of a
    /// turn; streams that vanish while it does must still leave cleanly.
    @Suite struct TeardownDuringBurst {
        static let subscribers = 10_000
        static let topics = 10

        /// 10,000 subscribers of 10 topics, publishers flat out, then the process
        /// holding them is SIGKILLed mid-burst (every socket closes at once, most
        /// with unread frames, so the gateway's writes hit resets): the gateway stays
        /// up, both subscriber gauges fall to exactly 0, its sockets go back to the
        /// listener's alone, and a new subscriber then gets a new publish. Sockets, not
        /// every descriptor: the runtime opens some of its own lazily (a CI run once
        /// counted 13 at the start and 14 at the end, where a start read a moment
        /// later holds 14: eventpolls, eventfds, timerfds, pipes, /dev/null and the
        /// listener); the message lists them by kind if this fails.
        @Test func tenThousandSubscribersVanishDuringAPublishBurst() async throws {
            try await withGatewayProcess { gateway in
                // The listener's alone (the start-up probe's connection may still be closing).
                let baseline = await gateway.waitForSockets(1, upTo: 2)
                let kindsBefore = gateway.probe.descriptorKinds()
                let load = try LoadTool.start(port: gateway.port, [
                    "--subscribers", "\(Self.subscribers)", "--topics", "\(Self.topics)", "--topic-prefix", "burst",
                    "--channel", "events", "--publishers", "4", "--rate", "0", "--size", "512",
                    "--duration", "60s", "--ramp", "3s",
                ])
                var killed = false
                defer { if !killed { load.send(SIGKILL) } }
                // Wait until every subscriber is in and publishing has gone on a while.
                let deadline = ContinuousClock.now + .seconds(60)
                var metrics: [String: Double] = [:]
                while ContinuousClock.now < deadline {
                    metrics = try await gateway.metrics()
                    if metrics[subscribersMetric(.events)] == Double(Self.subscribers),
                       (metrics["sse_gateway_publishes_total{channel=\"events\"}"] ?? 0) >= 200 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(metrics[subscribersMetric(.events)] == Double(Self.subscribers), "\(load.stderr.text.suffix(500))")
                let publishedBefore = metrics["sse_gateway_publishes_total{channel=\"events\"}"] ?? 0
                #expect(publishedBefore >= 200, "the burst had not started")
                load.send(SIGKILL)
                killed = true
                _ = await load.waitForExit(upTo: 10)

                let quiet = try await gateway.waitUntilQuiet(upTo: 30)
                #expect(quiet[subscribersMetric(.events)] == 0)
                #expect(quiet[subscribersMetric(.state)] == 0)
                #expect(gateway.child.isRunning)
                let sockets = await gateway.waitForSockets(baseline, upTo: 10)
                let kindsAfter = gateway.probe.descriptorKinds()
                #expect(sockets == baseline, "sockets \(sockets), at the start \(baseline): \(kindsAfter) against \(kindsBefore)")

                // Still serving: a new subscriber gets what is published next.
                let stream = try await gateway.subscribe("/events/burst/0")
                defer { stream.close() }
                let id = try await gateway.publish("/events/burst/0", "after")
                let event = try await stream.next()
                #expect(event?.data == "after" && event?.id == "\(id)")
                let log = gateway.child.stderr.text
                #expect(!log.contains("Fatal error") && !log.contains("Crash"), "\(log.suffix(2000))")
                Soak.report("teardown during burst: \(Self.subscribers) subscribers killed after "
                    + "\(Int(publishedBefore)) publishes; gauges back to 0, sockets \(sockets) (at the start \(baseline)), "
                    + "descriptors \(kindsAfter.values.reduce(0, +)) (at the start \(kindsBefore.values.reduce(0, +)))")
            }
        }
    }
}
