import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// The delivery histograms on a running gateway's `/metrics`, over real sockets.
struct DeliveryMetricsEndToEndTests {
    static let latency = "sse_gateway_delivery_latency_seconds"
    static let frames = "sse_gateway_frames_per_write"

    /// `/metrics` lists both histogram families per channel, every bucket from `le="0.0001"` to `le="+Inf"`,
    /// the whole scrape is valid exposition text, and nothing is counted before any stream was opened.
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

    /// Values delivered to subscribers move each channel's latency count by one per value, and frames per write.
    @Test(arguments: Transport.allCases)
    func deliveriesMoveTheHistograms(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let events = try await gateway.subscribe("/events/h")
            let state = try await gateway.subscribe("/state/h")
            defer { events.close(); state.close() }
            for i in 1...3 { _ = try await gateway.publish("/events/h", "e\(i)") }
            _ = try await gateway.publish("/state/h", "s")
            #expect(try await events.next(3, within: 10).count == 3)
            #expect(try await state.next(within: 10)?.data == "s")
            #expect(try await gateway.waitForMetric("\(Self.latency)_count{channel=\"events\"}", toBe: 3, within: 10) == 3)
            #expect(try await gateway.waitForMetric("\(Self.latency)_count{channel=\"state\"}", toBe: 1, within: 10) == 1)
            let text = try await gateway.send("GET", "/metrics").text
            #expect(ExpositionFormat.problems(in: text) == [])
            let values = MetricsText.parse(text)
            // Every write carries at least one frame: as many frame observations as writes, at most the frames.
            let writes = try #require(values["\(Self.frames)_count{channel=\"events\"}"])
            #expect(writes >= 1 && writes <= 3)
            #expect(values["\(Self.frames)_sum{channel=\"events\"}"] == 3)
            #expect((values["\(Self.latency)_sum{channel=\"events\"}"] ?? -1) >= 0)
            // On 127.0.0.1 a value is written well within 10 s of being accepted.
            #expect(values["\(Self.latency)_bucket{channel=\"events\",le=\"10\"}"] == 3)
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
