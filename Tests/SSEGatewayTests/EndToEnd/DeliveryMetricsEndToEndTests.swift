import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// The delivery histograms on a running gateway's `/metrics`, over real sockets.
struct DeliveryMetricsEndToEndTests {
    static let latency = "sse_gateway_delivery_latency_seconds"
    static let frames = "sse_gateway_frames_per_write"

    /// `/metrics` lists both histogram families per channel, every bucket from `le="0.0001"` to `le="+Inf"`,
    /// the whole scrape is valid exposition text, and nothing is counted before anything was written.
    @Test(arguments: Transport.allCases)
    func metricsListTheHistograms(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let text = try await gateway.send("GET", "/metrics").text
            #expect(ExpositionFormat.problems(in: text) == [])
            let lines = Set(text.split(separator: "\n").map(String.init))
            let values = MetricsText.parse(text)
            for (name, bounds) in [(Self.latency, ["0.0001", "0.001", "0.01", "0.1", "1", "10"]), (Self.frames, ["1", "256"])] {
                #expect(lines.contains("# TYPE \(name) histogram"), "no TYPE for \(name)")
                #expect(lines.contains { $0.hasPrefix("# HELP \(name) ") }, "no HELP for \(name)")
                for channel in Channel.allCases.map(\.rawValue) {
                    for le in bounds + ["+Inf"] {
                        #expect(values["\(name)_bucket{channel=\"\(channel)\",le=\"\(le)\"}"] == 0, "\(name) \(channel) le=\(le)")
                    }
                    #expect(values["\(name)_count{channel=\"\(channel)\"}"] == 0)
                    #expect(values["\(name)_sum{channel=\"\(channel)\"}"] == 0)
                }
            }
        }
    }

    /// What is recorded on the gateway's `DeliveryMetrics` is what the next scrape shows.
    @Test func recordedWritesShowOnTheNextScrape() async throws {
        try await withGateway { gateway in
            gateway.gateway.delivery.recordWrite(channel: .events, frames: 3, events: 2, oldestWaited: .milliseconds(2))
            gateway.gateway.delivery.recordWrite(channel: .state, frames: 1, events: 0, oldestWaited: nil)
            let text = try await gateway.send("GET", "/metrics").text
            #expect(ExpositionFormat.problems(in: text) == [])
            let values = MetricsText.parse(text)
            #expect(values["\(Self.latency)_bucket{channel=\"events\",le=\"0.001\"}"] == 0)
            #expect(values["\(Self.latency)_bucket{channel=\"events\",le=\"0.0025\"}"] == 2)
            #expect(values["\(Self.latency)_count{channel=\"events\"}"] == 2)
            #expect(values["\(Self.latency)_sum{channel=\"events\"}"] == 0.004)
            #expect(values["\(Self.latency)_count{channel=\"state\"}"] == 0)
            #expect(values["\(Self.frames)_bucket{channel=\"events\",le=\"4\"}"] == 1)
            #expect(values["\(Self.frames)_bucket{channel=\"state\",le=\"1\"}"] == 1)
        }
    }
}
