import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

struct MetricsTextTests {
    /// A scrape shows HELP, TYPE and samples per family, in the order they were written.
    @Test func smallExampleExactText() {
        var metrics = PrometheusText()
        metrics.gauge("sse_gateway_connections", help: "Open connections.", value: UInt64(3))
        metrics.gauge("sse_gateway_subscribers", help: "Open subscriptions by channel.", samples: [
            (labels: [("channel", "state")], value: UInt64(2)),
            (labels: [("channel", "events")], value: UInt64(5)),
        ])
        metrics.counter("sse_gateway_publishes_total", help: "Accepted publishes.", samples: [
            (labels: [("channel", "state")], value: UInt64(10)),
            (labels: [("channel", "events")], value: UInt64(0)),
        ])
        metrics.counter("sse_gateway_bytes_written_total", help: "Bytes written to clients.",
                        value: UInt64.max)
        #expect(metrics.text == """
            # HELP sse_gateway_connections Open connections.
            # TYPE sse_gateway_connections gauge
            sse_gateway_connections 3
            # HELP sse_gateway_subscribers Open subscriptions by channel.
            # TYPE sse_gateway_subscribers gauge
            sse_gateway_subscribers{channel="state"} 2
            sse_gateway_subscribers{channel="events"} 5
            # HELP sse_gateway_publishes_total Accepted publishes.
            # TYPE sse_gateway_publishes_total counter
            sse_gateway_publishes_total{channel="state"} 10
            sse_gateway_publishes_total{channel="events"} 0
            # HELP sse_gateway_bytes_written_total Bytes written to clients.
            # TYPE sse_gateway_bytes_written_total counter
            sse_gateway_bytes_written_total 18446744073709551615

            """)
    }

    /// Label values escape backslash, double quote and line feed; several labels are comma-separated.
    @Test func labelValuesAreEscaped() {
        var metrics = PrometheusText()
        metrics.gauge("m", help: "h", samples: [(labels: [("a", "back\\slash \"quoted\"\nnext"), ("b", "x")], value: 1)])
        #expect(metrics.text == """
            # HELP m h
            # TYPE m gauge
            m{a="back\\\\slash \\"quoted\\"\\nnext",b="x"} 1

            """)
    }

    /// HELP text escapes backslash and line feed but leaves quotes alone.
    @Test func helpIsEscaped() {
        var metrics = PrometheusText()
        metrics.gauge("m", help: "a \\ b\n\"c\"", samples: [(labels: [], value: 0)])
        #expect(metrics.text.hasPrefix("# HELP m a \\\\ b\\n\"c\"\n# TYPE m gauge\n"))
    }

    /// Integral numbers print without a decimal point or exponent; others as floats the format parses.
    @Test(arguments: [
        (3.0, "3"), (-2.0, "-2"), (0.0, "0"), (-0.0, "0"), (1e15, "1000000000000000"),
        (9.0e18, "9000000000000000000"), (2.5, "2.5"), (0.1, "0.1"), (1e-7, "1e-07"),
        (Double.nan, "NaN"), (Double.infinity, "+Inf"), (-Double.infinity, "-Inf"),
    ])
    func doubleValues(value: Double, text: String) {
        #expect(value.prometheusText == text)
    }

    /// Integer values print in plain decimal.
    @Test func integerValues() {
        #expect(UInt64(0).prometheusText == "0")
        #expect(UInt64.max.prometheusText == "18446744073709551615")
        #expect((-3).prometheusText == "-3")
    }

    /// A family without samples still announces itself.
    @Test func familyWithoutSamples() {
        var metrics = PrometheusText()
        metrics.counter("x_total", help: "none yet", samples: [] as [(labels: [(String, String)], value: UInt64)])
        #expect(metrics.text == "# HELP x_total none yet\n# TYPE x_total counter\n")
    }

    /// A histogram writes, per label set, cumulative `_bucket`s with `le` last among the labels and `+Inf` at the end, then `_sum` and `_count`.
    @Test func histogramExactText() {
        var metrics = PrometheusText()
        metrics.histogram("latency_seconds", help: "Waits.", samples: [
            (labels: [("channel", "state")], histogram: HistogramSnapshot(bounds: [0.0001, 0.5, 1], counts: [1, 2, 0, 3], sum: 4.25)),
            (labels: [("channel", "events")], histogram: HistogramSnapshot(bounds: [0.0001, 0.5, 1], counts: [0, 0, 0, 0], sum: 0)),
        ])
        metrics.histogram("frames", help: "Frames.", samples: [
            (labels: [], histogram: HistogramSnapshot(bounds: [1, 2], counts: [0, 5, 0], sum: 10)),
        ])
        #expect(metrics.text == """
            # HELP latency_seconds Waits.
            # TYPE latency_seconds histogram
            latency_seconds_bucket{channel="state",le="0.0001"} 1
            latency_seconds_bucket{channel="state",le="0.5"} 3
            latency_seconds_bucket{channel="state",le="1"} 3
            latency_seconds_bucket{channel="state",le="+Inf"} 6
            latency_seconds_sum{channel="state"} 4.25
            latency_seconds_count{channel="state"} 6
            latency_seconds_bucket{channel="events",le="0.0001"} 0
            latency_seconds_bucket{channel="events",le="0.5"} 0
            latency_seconds_bucket{channel="events",le="1"} 0
            latency_seconds_bucket{channel="events",le="+Inf"} 0
            latency_seconds_sum{channel="events"} 0
            latency_seconds_count{channel="events"} 0
            # HELP frames Frames.
            # TYPE frames histogram
            frames_bucket{le="1"} 0
            frames_bucket{le="2"} 5
            frames_bucket{le="+Inf"} 5
            frames_sum 10
            frames_count 5

            """)
        #expect(ExpositionFormat.problems(in: metrics.text) == [])
    }

    /// The delivery histograms as `/metrics` writes them, after writes of every kind, are valid exposition text.
    @Test func deliveryHistogramsAreValidText() {
        let delivery = DeliveryMetrics()
        delivery.recordWrite(channel: .events, frames: 5, events: 4, oldestWaited: .microseconds(100))
        delivery.recordWrite(channel: .events, frames: 1, events: 0, oldestWaited: nil)
        delivery.recordWrite(channel: .state, frames: 1000, events: 1000, oldestWaited: .seconds(11))
        var metrics = PrometheusText()
        metrics.gauge("before", help: "A family before.", value: 1)
        metrics.histogram("sse_gateway_delivery_latency_seconds", help: "Waits.",
                          samples: Channel.allCases.map { (labels: [("channel", $0.rawValue)], histogram: delivery.latency($0)) })
        metrics.histogram("sse_gateway_frames_per_write", help: "Frames.",
                          samples: Channel.allCases.map { (labels: [("channel", $0.rawValue)], histogram: delivery.framesPerWrite($0)) })
        #expect(ExpositionFormat.problems(in: metrics.text) == [])
        let values = MetricsText.parse(metrics.text)
        #expect(values[#"sse_gateway_delivery_latency_seconds_bucket{channel="events",le="0.0001"}"#] == 4)
        #expect(values[#"sse_gateway_delivery_latency_seconds_bucket{channel="state",le="10"}"#] == 0)
        #expect(values[#"sse_gateway_delivery_latency_seconds_bucket{channel="state",le="+Inf"}"#] == 1000)
        #expect(values[#"sse_gateway_delivery_latency_seconds_sum{channel="state"}"#] == 11000)
        #expect(values[#"sse_gateway_frames_per_write_bucket{channel="events",le="1"}"#] == 1)
        #expect(values[#"sse_gateway_frames_per_write_bucket{channel="events",le="8"}"#] == 2)
        #expect(values[#"sse_gateway_frames_per_write_count{channel="events"}"#] == 2)
        #expect(values[#"sse_gateway_frames_per_write_sum{channel="events"}"#] == 6)
    }

    /// The content type is the one Prometheus expects for format 0.0.4.
    @Test func contentType() {
        #expect(PrometheusText.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }
}
