import Foundation
import Testing
import TestSupport

/// `deploy/`: every metric the Grafana dashboard and the Prometheus alert rules name
/// is on `/metrics` of a running gateway (the executable, in a cluster on a real
/// redis-server, so the `--redis` metrics are there too). A renamed metric breaks this.
struct DeployFilesTests {
    /// The metric families named in `text`: `sse_gateway_…` names, a histogram's
    /// `_bucket`/`_sum`/`_count` series read as the histogram itself.
    static func metricNames(in text: String) -> Set<String> {
        var names = Set<String>()
        for match in text.matches(of: #/sse_gateway_[a-z0-9_]+/#) {
            var name = String(match.output)
            for suffix in ["_bucket", "_sum", "_count"] where name.hasSuffix(suffix) {
                name.removeLast(suffix.count)
            }
            names.insert(name)
        }
        return names
    }

    @Test func everyMetricTheDashboardAndRulesNameExists() async throws {
        let dashboard = try String(contentsOfFile: packageRoot + "/deploy/grafana/sse-gateway-dashboard.json", encoding: .utf8)
        let rules = try String(contentsOfFile: packageRoot + "/deploy/prometheus/sse-gateway-rules.yml", encoding: .utf8)
        let named = Self.metricNames(in: dashboard).union(Self.metricNames(in: rules))
        // What the issue asks the two to cover.
        for required in ["sse_gateway_connections", "sse_gateway_subscribers", "sse_gateway_publishes_total",
                         "sse_gateway_events_delivered_total", "sse_gateway_delivery_latency_seconds",
                         "sse_gateway_slow_subscriber_disconnects_total", "sse_gateway_connections_refused_total",
                         "sse_gateway_redis_up", "sse_gateway_redis_reconnects_total", "sse_gateway_gap_events_total",
                         "sse_gateway_auth_failures_total", "sse_gateway_ready", "sse_gateway_open_files_limit"] {
            #expect(named.contains(required), "deploy/ does not use \(required)")
        }

        let redis = try await RedisServer.start()
        do {
            try await withGatewayProcess(["--redis", redis.url]) { gateway in
                let response = try await gateway.send("GET", "/metrics")
                #expect(response.status == 200)
                let exposed = Set(response.text.split(separator: "\n")
                    .filter { $0.hasPrefix("# TYPE ") }
                    .compactMap { $0.split(separator: " ").dropFirst(2).first.map(String.init) })
                let missing = named.subtracting(exposed).sorted()
                #expect(missing.isEmpty, "named in deploy/ but not on /metrics: \(missing)")
            }
        } catch {
            await redis.stop()
            throw error
        }
        await redis.stop()
    }
}
