import Foundation
import Testing

extension Reliability {
    /// Subscribers that come and go by the thousand while publishers run.
    @Suite struct Churn {
        /// Sessions at once.
        static let concurrency = 250
        static let topics = 8
        /// Sessions of the warm-up cycle, after which memory has settled.
        static let warmUpSessions = 600
        /// Sessions of one measured cycle (the CI run is one cycle).
        static let cycleSessions = 3_000
        /// RSS may end this far above where it settled after the warm-up. Glibc keeps
        /// freed memory in its per-thread arenas, so RSS is a high-water mark: after a
        /// warm-up at the same concurrency it moves only by fragmentation (measured:
        /// +0.7 MiB after one cycle in debug; +1.2 MiB after 84,000 sessions in release,
        /// flat for the last 15 cycles). A leak of 3 KiB per session crosses it in one
        /// 3,000-session cycle; in a 30-minute soak (about 500,000 sessions) 17 bytes do.
        static let residentMargin = 8 * 1_048_576

        /// 3,000 subscribers (250 at a time, 8 topics, both channels) connect, read a few events and leave — half with a FIN, half with a reset, some before the response head — while publishers run: afterwards both subscriber gauges are 0, the gateway's descriptors are back to their count after warm-up, its RSS is within 8 MiB of where it settled, every reply id followed the previous one, and every subscriber got every event after it subscribed, in order.
        @Test func subscribersComeAndGoLeavingNothingBehind() async throws {
            try await withGatewayProcess(["--replay-max-age", "10s"]) { gateway in
                let probe = gateway.probe
                let startDescriptors = probe.openDescriptors()

                let ledger = TopicLedger(topics: Self.topics)
                let warmUp = try await ChurnCycle(sessions: Self.warmUpSessions, port: gateway.port, ledger: ledger).run()
                warmUp.expectClean()
                _ = try await gateway.waitUntilQuiet(upTo: 10)
                let baseline = await gateway.waitForDescriptors(startDescriptors, upTo: 5)
                try await Task.sleep(for: .seconds(1))
                let settled = probe.residentBytes()
                Soak.report("churn warm-up: \(warmUp.summary); gateway descriptors \(startDescriptors) at start, "
                    + "\(baseline) after; RSS settled at \(mebibytes(settled))")

                let started = ContinuousClock.now
                let soakEnd = Soak.seconds.map { started + .seconds($0) }
                var cycle = 1
                var sessions = 0
                var resident = settled
                repeat {
                    let peaks = (gateway: PeakSampler(probe), tests: PeakSampler(.current))
                    let result = try await ChurnCycle(sessions: Self.cycleSessions, port: gateway.port, ledger: ledger).run()
                    let gatewayPeak = await peaks.gateway.stop(), testsPeak = await peaks.tests.stop()
                    result.expectClean()
                    sessions += result.sessions

                    let metrics = try await gateway.waitUntilQuiet(upTo: 10)
                    #expect(metrics[subscribersMetric(.events)] == 0)
                    #expect(metrics[subscribersMetric(.state)] == 0)
                    #expect(metrics["sse_gateway_connections"] == 1, "only the metrics request is open")
                    let descriptors = await gateway.waitForDescriptors(baseline, upTo: 5)
                    #expect(descriptors == baseline, "gateway descriptors \(descriptors), baseline \(baseline)")
                    #expect(gatewayPeak.descriptors < descriptorBudget && testsPeak.descriptors < descriptorBudget)
                    try await Task.sleep(for: .seconds(1))
                    resident = probe.residentBytes()
                    #expect(resident <= settled + Self.residentMargin,
                            "RSS \(mebibytes(resident)) after cycle \(cycle), settled at \(mebibytes(settled))")
                    Soak.report("churn cycle \(cycle) at \(Int((ContinuousClock.now - started).components.seconds)) s: "
                        + "\(result.summary); subscribers events \(Int(metrics[subscribersMetric(.events)] ?? -1)) "
                        + "state \(Int(metrics[subscribersMetric(.state)] ?? -1)), connections "
                        + "\(Int(metrics["sse_gateway_connections"] ?? -1)); gateway descriptors \(descriptors) "
                        + "(peak \(gatewayPeak.descriptors), baseline \(baseline)), RSS \(mebibytes(resident)) "
                        + "(peak \(mebibytes(gatewayPeak.resident)), settled \(mebibytes(settled))); test process "
                        + "descriptors peak \(testsPeak.descriptors)")
                    cycle += 1
                } while soakEnd.map({ ContinuousClock.now < $0 }) ?? false
                Soak.report("churn total: \(sessions) sessions in \(cycle - 1) cycles over "
                    + "\(Int((ContinuousClock.now - started).components.seconds)) s; RSS \(mebibytes(settled)) settled → "
                    + "\(mebibytes(resident)) at the end")
            }
        }

        /// 10,000 clients (50 at a time) that connect, send a subscribe request and reset at once, as fast as they can: the gateway accepts no faster than it serves, so what waits stays in the kernel's listen queue — the gateway's descriptors peak under 1,000 and its RSS under 16 MiB above where it started (before the fix they reached thousands and 100+ MiB) — and afterwards nothing is left: gauges 0, descriptors back where they were.
        @Test func connectionFloodWaitsInTheListenQueue() async throws {
            try await withGatewayProcess { gateway in
                let probe = gateway.probe
                let startDescriptors = probe.openDescriptors()
                let base = probe.residentBytes()
                let peaks = PeakSampler(probe)
                let port = gateway.port
                let next = Counter()
                let failures = await withTaskGroup(of: [String].self, returning: [String].self) { group in
                    for _ in 0..<50 {
                        group.addTask {
                            var failures: [String] = []
                            while next.increment() < 10_000 {
                                do {
                                    try await CheckedStream.sendOnly(port: port, target: "/events/flood").leaveAbruptly()
                                } catch {
                                    if failures.count < 3 { failures.append("\(error)") }
                                }
                            }
                            return failures
                        }
                    }
                    return await group.reduce(into: []) { $0 += $1 }
                }
                let metrics = try await gateway.waitUntilQuiet(upTo: 10)
                let peak = await peaks.stop()
                #expect(failures.isEmpty, "\(failures.prefix(3))")
                #expect(peak.descriptors < 1_000, "the gateway held \(peak.descriptors) descriptors")
                #expect(peak.resident < base + 16 * 1_048_576, "RSS peaked at \(mebibytes(peak.resident)), \(mebibytes(base)) at start")
                #expect(metrics[subscribersMetric(.events)] == 0)
                #expect(await gateway.waitForDescriptors(startDescriptors, upTo: 5) == startDescriptors)
                Soak.report("connection flood: 10,000 connect-request-reset clients, 50 at a time; gateway descriptors "
                    + "peak \(peak.descriptors), RSS \(mebibytes(base)) at start, peak \(mebibytes(peak.resident))")
            }
        }
    }
}
