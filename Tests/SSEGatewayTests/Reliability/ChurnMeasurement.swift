import Foundation
import Testing
import TestSupport

extension Reliability.Churn {
    static let handshakeFailuresMetric = "sse_gateway_tls_handshake_failures_total"

    /// Churns `gateway` (over its transport): a warm-up of `warmUp` sessions,
    /// after which descriptors and memory have settled, then cycles of `cycle`
    /// sessions (one, or as many as `STREAMS_SOAK_SECONDS` holds). After each
    /// cycle: both subscriber gauges 0, only the metrics request open, the
    /// gateway's descriptors back to their count after the warm-up, its RSS
    /// within `residentMargin` of where it settled, and every session and
    /// survivor clean; over TLS, every session that left mid-handshake counted
    /// as a handshake failure. Prints the figures; returns the measured cycles' sum.
    static func churn(_ gateway: GatewayProcess, warmUp warmUpSessions: Int, cycle cycleSessions: Int)
        async throws -> ChurnCycle.Result {
        let label = gateway.transport == .tls ? "TLS churn" : "churn"
        let probe = gateway.probe
        let startDescriptors = probe.openDescriptors()

        let ledger = TopicLedger(topics: topics)
        let warmUp = try await ChurnCycle(sessions: warmUpSessions, port: gateway.port, ledger: ledger,
                                          transport: gateway.transport).run()
        warmUp.expectClean()
        var previous = try await gateway.waitUntilQuiet(upTo: 10)
        let baseline = await gateway.waitForDescriptors(startDescriptors, upTo: 5)
        try await Task.sleep(for: .seconds(1))
        let settled = probe.residentBytes()
        Soak.report("\(label) warm-up: \(warmUp.summary); gateway descriptors \(startDescriptors) at start, "
            + "\(baseline) after; RSS settled at \(mebibytes(settled))")

        let started = ContinuousClock.now
        let soakEnd = Soak.seconds.map { started + .seconds($0) }
        var cycle = 1
        var total = ChurnCycle.Result()
        var resident = settled
        repeat {
            let peaks = (gateway: PeakSampler(probe), tests: PeakSampler(.current))
            let result = try await ChurnCycle(sessions: cycleSessions, port: gateway.port, ledger: ledger,
                                              transport: gateway.transport).run()
            let gatewayPeak = await peaks.gateway.stop(), testsPeak = await peaks.tests.stop()
            result.expectClean()
            total.merge(result)

            let metrics = try await gateway.waitUntilQuiet(upTo: 10)
            #expect(metrics[subscribersMetric(.events)] == 0)
            #expect(metrics[subscribersMetric(.state)] == 0)
            #expect(metrics["sse_gateway_connections"] == 1, "only the metrics request is open")
            if gateway.transport == .tls {
                let failed = Int((metrics[handshakeFailuresMetric] ?? -1) - (previous[handshakeFailuresMetric] ?? 0))
                #expect(failed == result.midHandshake,
                        "\(failed) handshake failures counted, \(result.midHandshake) sessions left mid-handshake")
            }
            previous = metrics
            let descriptors = await gateway.waitForDescriptors(baseline, upTo: 5)
            #expect(descriptors == baseline, "gateway descriptors \(descriptors), baseline \(baseline)")
            #expect(gatewayPeak.descriptors < descriptorBudget && testsPeak.descriptors < descriptorBudget)
            try await Task.sleep(for: .seconds(1))
            resident = probe.residentBytes()
            #expect(resident <= settled + residentMargin,
                    "RSS \(mebibytes(resident)) after cycle \(cycle), settled at \(mebibytes(settled))")
            Soak.report("\(label) cycle \(cycle) at \(Int((ContinuousClock.now - started).components.seconds)) s: "
                + "\(result.summary); subscribers events \(Int(metrics[subscribersMetric(.events)] ?? -1)) "
                + "state \(Int(metrics[subscribersMetric(.state)] ?? -1)), connections "
                + "\(Int(metrics["sse_gateway_connections"] ?? -1)); gateway descriptors \(descriptors) "
                + "(peak \(gatewayPeak.descriptors), baseline \(baseline)), RSS \(mebibytes(resident)) "
                + "(peak \(mebibytes(gatewayPeak.resident)), settled \(mebibytes(settled))); test process "
                + "descriptors peak \(testsPeak.descriptors)")
            cycle += 1
        } while soakEnd.map({ ContinuousClock.now < $0 }) ?? false
        Soak.report("\(label) total: \(total.sessions) sessions in \(cycle - 1) cycles over "
            + "\(Int((ContinuousClock.now - started).components.seconds)) s; RSS \(mebibytes(settled)) settled → "
            + "\(mebibytes(resident)) at the end")
        return total
    }
}
