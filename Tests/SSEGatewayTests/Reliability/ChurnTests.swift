import Foundation
import Testing
import TestSupport

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

        /// TLS sessions of the warm-up cycle and of one measured cycle: fewer, so
        /// the TLS run adds about 10 s to the suite (handshakes cost the most in
        /// a debug build).
        static let tlsWarmUpSessions = 400
        static let tlsCycleSessions = 1_500

        /// 3,000 subscribers (250 at a time, 8 topics, both channels) connect, read a few events and leave — half with a FIN, half with a reset, some before the response head — while publishers run: afterwards both subscriber gauges are 0, the gateway's descriptors are back to their count after warm-up, its RSS is within 8 MiB of where it settled, every reply id followed the previous one, and every subscriber got every event after it subscribed, in order.
        @Test func subscribersComeAndGoLeavingNothingBehind() async throws {
            try await withGatewayProcess(["--replay-max-age", "10s"]) { gateway in
                _ = try await Self.churn(gateway, warmUp: Self.warmUpSessions, cycle: Self.cycleSessions)
            }
        }

        /// The same churn over HTTPS, 1,500 sessions (after a warm-up of 400), one in four of them giving up during the TLS handshake — connected but silent, part of a ClientHello sent, or a whole ClientHello sent and the gateway's answer read — half with a FIN, half with a reset, while TLS publishers and subscribers run: a FIN mid-handshake is answered by a close within 5 s (not at the 10 s header timeout), every abandoned handshake is counted in `sse_gateway_tls_handshake_failures_total`, and afterwards gauges, descriptors and RSS are back as over plain HTTP and every subscriber got every event in order.
        @Test func tlsSubscribersComeAndGoSomeMidHandshake() async throws {
            try await withGatewayProcess(["--replay-max-age", "10s"], over: .tls) { gateway in
                let total = try await Self.churn(gateway, warmUp: Self.tlsWarmUpSessions, cycle: Self.tlsCycleSessions)
                #expect(total.midHandshake >= Self.tlsCycleSessions / 5, "\(total.midHandshake) sessions left mid-handshake")
            }
        }

        /// 10,000 clients (50 at a time) that connect, send a subscribe request and reset at once, as fast as they can: the gateway accepts no faster than it serves, so what waits stays in the kernel's listen queue — the gateway's descriptors peak under 1,000 and its RSS under 16 MiB above where it started (before the fix they reached thousands and 100+ MiB) — and afterwards nothing is left: gauges 0, no more descriptors open than before the flood.
        @Test func connectionFloodWaitsInTheListenQueue() async throws {
            try await withGatewayProcess { gateway in
                let probe = gateway.probe
                let startDescriptors = await gateway.settledDescriptors()
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
                let descriptorsAfter = await gateway.waitForDescriptors(atMost: startDescriptors, upTo: 5)
                #expect(descriptorsAfter <= startDescriptors, "\(descriptorsAfter) descriptors open after the flood, \(startDescriptors) before it")
                Soak.report("connection flood: 10,000 connect-request-reset clients, 50 at a time; gateway descriptors "
                    + "peak \(peak.descriptors), RSS \(mebibytes(base)) at start, peak \(mebibytes(peak.resident))")
            }
        }
    }
}
