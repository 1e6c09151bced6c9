import Testing
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

    /// The content type is the one Prometheus expects for format 0.0.4.
    @Test func contentType() {
        #expect(PrometheusText.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }
}
