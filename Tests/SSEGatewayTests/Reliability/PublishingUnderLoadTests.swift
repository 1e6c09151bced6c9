import Foundation
import Testing
import TestSupport

extension Reliability {
    /// Publishers posting as fast as they can to many subscribers.
    @Suite struct PublishingUnderLoad {
        /// 10,000 subscribers for 30 s in the soak (issue 8); 2,000 for 10 s in CI.
        static let subscribers = Soak.isOn ? 10_000 : 2_000
        static let seconds = Soak.isOn ? 30 : 10
        static let topics = 100
        static let publishers = 8
        static let prefix = "load"

        /// 2,000 subscribers on 100 topics (sse-load, a child process) while 8 publishers post as fast as their replies come for 10 s (10,000 for 30 s in the soak): every POST is answered 200, no subscriber misses, doubles or reorders anything (sse-load's accounting), and an auditor per topic, subscribed before the first publish, sees ids 1, 2, 3, … without a gap up to the topic's last, as many as the POSTs answered.
        @Test func everyPublishAnsweredNoGapNoDuplicateNoReordering() async throws {
            try await withGatewayProcess { gateway in
                let peaks = (gateway: PeakSampler(gateway.probe), tests: PeakSampler(.current))
                let targets = (0..<Self.topics).map { "/events/\(Self.prefix)/\($0)" }
                let finals = SharedValue<[UInt64]?>(nil)
                let auditors = Readers(port: gateway.port, targets: targets, order: .contiguous,
                                       check: { LoadPayloadSequences().check })
                async let audited = auditors.run { stream, index in
                    while finals.value == nil {
                        _ = try await stream.read(count: stream.count + 1, within: 0.3)
                    }
                    return try await stream.read(throughID: finals.value?[index] ?? 0, within: 30)
                }
                try await auditors.waitUntilOpen()

                let load = try LoadTool.start(port: gateway.port, [
                    "--subscribers", "\(Self.subscribers)", "--topics", "\(Self.topics)", "--topic-prefix", Self.prefix,
                    "--channel", "events", "--publishers", "\(Self.publishers)", "--rate", "0", "--size", "128",
                    "--duration", "\(Self.seconds)s", "--ramp", Soak.isOn ? "10s" : "2s", "--settle", "3s",
                ])
                let report = try await LoadTool.report(of: load, upTo: Double(Self.seconds) + 120)

                // One more publish per topic, "end": its id is the topic's last; the auditors read through it.
                let publisher = KeepAlivePublisher(port: gateway.port)
                var lastIDs: [UInt64] = []
                do {
                    for target in targets { lastIDs.append(try await publisher.publish(target, Array("end".utf8))) }
                } catch {
                    publisher.close()
                    throw error
                }
                publisher.close()
                finals.set(lastIDs)
                try await auditors.waitUntilRead()
                let metrics = try await gateway.metrics()
                auditors.release()
                let results = try await audited
                let gatewayPeak = await peaks.gateway.stop(), testsPeak = await peaks.tests.stop()

                #expect(report["connections_established"] == Double(Self.subscribers) && report["connections_failed"] == 0,
                        "\(report.line)")
                let acked = report["publishes_acked"] ?? 0
                #expect(acked > 0 && report["publishes_attempted"] == acked && report["publishes_failed"] == 0,
                        "every POST answered 200: \(report.line)")
                // sse-load counts the deliveries it is owed from its own streaming
                // subscribers (the gateway's reply also counts each topic's auditor).
                let expected = report["expected_deliveries"] ?? 0
                #expect(expected == acked * Double(Self.subscribers / Self.topics),
                        "each publish was queued for its topic's subscribers: \(report.line)")
                #expect(report["unique_deliveries"] == expected && report["duplicates"] == 0 && report["out_of_order"] == 0
                        && report["unrecognized_events"] == 0 && report["not_on_latest"] == 0
                        && report["slow_subscriber_disconnects"] == 0 && report.error == nil, "\(report.line)")
                for result in results {
                    #expect(result.problem == nil, "auditor of \(targets[result.index]): \(result.problem ?? "")")
                    #expect(result.first == 1 && result.last == lastIDs[result.index],
                            "auditor of \(targets[result.index]): ids \(result.first ?? 0)...\(result.last ?? 0), last \(lastIDs[result.index])")
                }
                // Ids 1...last of every topic were seen, one per acked POST and one per "end".
                let ids = lastIDs.reduce(0, +)
                #expect(Double(ids) == acked + Double(Self.topics), "\(ids) ids for \(Int(acked)) POSTs answered and \(Self.topics) ends")
                #expect(metrics["sse_gateway_publishes_total{channel=\"events\"}"] == Double(ids))
                #expect(metrics["sse_gateway_slow_subscriber_disconnects_total"] == 0)
                #expect(gatewayPeak.descriptors < descriptorBudget && testsPeak.descriptors < descriptorBudget,
                        "descriptors: gateway peak \(gatewayPeak.descriptors), tests peak \(testsPeak.descriptors)")
                let quiet = try await gateway.waitUntilQuiet(upTo: 10)
                #expect(quiet[subscribersMetric(.events)] == 0)

                func figure(_ key: String) -> String {
                    guard let value = report[key] else { return "null" }
                    return value == value.rounded() ? "\(Int(value))" : String(format: "%.1f", value)
                }
                Soak.report("publishing under load: \(Self.subscribers) subscribers on \(Self.topics) topics, "
                    + "\(Self.publishers) publishers for \(Self.seconds) s: \(figure("publishes_acked")) POSTs answered "
                    + "(\(figure("publish_rate_achieved"))/s, ack p99 \(figure("publish_ack_p99_ms")) ms), "
                    + "\(figure("unique_deliveries")) deliveries, \(Int(expected)) expected, duplicates \(figure("duplicates")), out of order \(figure("out_of_order")), "
                    + "latency p99 \(figure("latency_p99_ms")) ms; gateway peak \(gatewayPeak.descriptors) descriptors, "
                    + "RSS \(mebibytes(gatewayPeak.resident))")
            }
        }
    }
}

/// sse-load's payloads are `<publisher>:<sequence>:<nanos>:xxx…`, its sequence
/// counting one publisher's publishes to one topic from 1: a subscriber there
/// from the start sees each publisher's as 1, 2, 3, … The closing "end" is not one.
final class LoadPayloadSequences {
    private var last: [Int: Int] = [:]

    func check(_ id: UInt64, _ data: String) -> String? {
        if data == "end" { return nil }
        let fields = data.split(separator: ":", maxSplits: 2)
        guard fields.count == 3, let publisher = Int(fields[0]), let sequence = Int(fields[1]) else {
            return "data \(data.prefix(24))"
        }
        let expected = (last[publisher] ?? 0) + 1
        last[publisher] = sequence
        return sequence == expected ? nil : "publisher \(publisher)'s \(sequence) where \(expected) was due"
    }
}
