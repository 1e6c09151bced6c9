import Foundation
import Testing
@testable import SSELoad

/// The report's two forms.
struct ReportTests {
    private static let keys = [
        "tool", "url", "urls", "publish_to", "channel", "subscribers", "topics", "publishers", "rate", "size", "duration_s", "ramp_s",
        "connections_established", "connections_failed", "connections_per_url", "connect_s", "connect_p50_ms", "connect_p99_ms", "connect_max_ms",
        "publishes_attempted", "publishes_acked", "publishes_failed", "publish_s", "publish_rate_achieved",
        "publish_ack_p50_ms", "publish_ack_p99_ms",
        "events_received", "unique_deliveries", "expected_deliveries", "server_counted_deliveries",
        "subscriber_count_mismatches", "loss", "duplicates", "out_of_order",
        "unrecognized_events", "deliveries_per_s",
        "latency_samples", "latency_p50_ms", "latency_p90_ms", "latency_p99_ms", "latency_p999_ms", "latency_max_ms",
        "slow_subscriber_disconnects", "not_on_latest", "elapsed_s", "load_cpu_s", "error",
    ]

    private func emptyReport(_ change: (inout LoadConfiguration) -> Void = { _ in }) -> LoadReport {
        var configuration = LoadConfiguration()
        change(&configuration)
        return LoadReport(configuration: configuration, stats: LoadStats(), published: PublisherResult(topics: 1),
                          notOnLatest: 0, timeline: Timeline(startNanos: 0))
    }

    /// `--json` is one line of valid JSON with every documented key, in order, and nulls for what a run lacks.
    @Test func jsonLineHasEveryKeyInOrder() throws {
        let line = emptyReport().jsonLine
        #expect(!line.contains("\n"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(Set(object.keys) == Set(Self.keys))
        let positions = Self.keys.map { line.range(of: "\"\($0)\":")!.lowerBound }
        #expect(positions == positions.sorted())
        #expect(object["latency_p99_ms"] is NSNull)
        #expect(object["error"] is NSNull)
        #expect(object["loss"] as? Int == 0)
        #expect(object["url"] as? String == "http://127.0.0.1:8080")
    }

    /// Strings in the JSON line are escaped, so an error text with quotes or newlines keeps it one valid line.
    @Test func jsonEscapesStrings() throws {
        var report = emptyReport()
        report.firstError = "status 400: \"bad\"\nline\u{1}"
        let object = try #require(try JSONSerialization.jsonObject(with: Data(report.jsonLine.utf8)) as? [String: Any])
        #expect(object["error"] as? String == "status 400: \"bad\"\nline\u{1}")
        #expect(!report.jsonLine.contains("\n"))
    }

    /// The summary names every figure a person looks for, and says loss is not counted on /state.
    @Test func summaryNamesTheFigures() {
        let summary = emptyReport().summary
        for word in ["connections", "publishes", "deliveries", "loss 0", "duplicates", "out of order",
                     "deliveries/s", "latency", "streams ended early"] {
            #expect(summary.contains(word), "missing \(word)")
        }
        #expect(emptyReport { $0.channel = .state }.summary.contains("loss not counted on /state"))
    }
}
