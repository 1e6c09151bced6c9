import GatewayAPI
import HTTPCore
import StreamHub

/// `GET /metrics`: the gateway's gauges and counters in the Prometheus text
/// format. Gauges come from lock-free counters (and one hop to the hub for
/// the topic count), so scraping never waits on a stream; the delivery
/// histograms are read from `DeliveryMetrics`' atomics the same way.
struct MetricsHandler: Sendable {
    let engine: any StreamEngine
    let counters: ConnectionCounters
    let authFailures: AuthFailures
    let delivery: DeliveryMetrics
    let descriptorLimit: UInt64
    /// Whether a stop has begun (readiness off: the drain).
    let drain: StreamDrain

    func respond() async -> HTTPResponse {
        let snapshot = await engine.snapshot()
        let hubCounters = engine.counters
        var text = PrometheusText()
        func perChannel(_ value: (Channel) -> UInt64) -> [(labels: [(String, String)], value: UInt64)] {
            Channel.allCases.map { (labels: [("channel", $0.rawValue)], value: value($0)) }
        }
        let open = counters.open.load(ordering: .relaxed)
        let http2 = counters.http2.connections.load(ordering: .relaxed)
        text.gauge("sse_gateway_connections", help: "Open client connections, per protocol (HTTP/2 once it is spoken).",
                   samples: [(labels: [("protocol", "http1")], value: UInt64(max(0, open - http2))),
                             (labels: [("protocol", "http2")], value: UInt64(max(0, http2)))])
        text.gauge("sse_gateway_http2_streams", help: "Open HTTP/2 streams, across every HTTP/2 connection.",
                   value: UInt64(max(0, counters.http2.streams.load(ordering: .relaxed))))
        text.counter("sse_gateway_http2_goaways_total",
                     help: "GOAWAY frames sent, per reason (shutdown, idle_timeout, and each abuse refused).",
                     samples: HTTP2GoAwayReason.allCases.map { (labels: [("reason", $0.rawValue)], value: counters.http2.goAways($0)) })
        text.gauge("sse_gateway_subscribers", help: "Subscribers connected now, per channel.",
                   samples: perChannel { UInt64(max(0, hubCounters.subscribers($0))) })
        text.gauge("sse_gateway_topics", help: "Topics the hub holds.", value: snapshot.topics)
        text.counter("sse_gateway_publishes_total", help: "Values published, per channel.",
                     samples: perChannel { hubCounters.publishes($0) })
        text.counter("sse_gateway_events_delivered_total", help: "Frames handed to subscriber connections, per channel.",
                     samples: perChannel { hubCounters.framesDelivered($0) })
        text.counter("sse_gateway_frames_queued_total", help: "Frames queued for subscribers, per channel.",
                     samples: perChannel { hubCounters.framesQueued($0) })
        text.counter("sse_gateway_slow_subscriber_disconnects_total",
                     help: "Events subscribers disconnected for falling too far behind.",
                     value: hubCounters.slowSubscriberDisconnects)
        text.counter("sse_gateway_gap_events_total",
                     help: "gap events sent to subscribers (events gone from the replay window before they had them).",
                     value: hubCounters.gapEvents)
        text.counter("sse_gateway_forgotten_topics_let_go_total",
                     help: "Forgotten topics whose last events id was let go (16,384 are kept per event loop): "
                         + "used again, such a topic starts at id 1.",
                     value: hubCounters.forgottenTopicsLetGo)
        text.histogram("sse_gateway_delivery_latency_seconds",
                       help: "Seconds from a publish being accepted to its frame's write to a subscriber completing, "
                           + "per channel (a write's values are all observed at its oldest's wait: an upper bound for the others).",
                       samples: Channel.allCases.map { (labels: [("channel", $0.rawValue)], histogram: delivery.latency($0)) })
        text.histogram("sse_gateway_frames_per_write",
                       help: "Frames (heartbeats included) per write to a subscriber's socket, per channel.",
                       samples: Channel.allCases.map { (labels: [("channel", $0.rawValue)], histogram: delivery.framesPerWrite($0)) })
        for metric in engine.metrics {
            switch metric.kind {
            case .gauge: text.gauge(metric.name, help: metric.help, value: metric.value)
            case .counter: text.counter(metric.name, help: metric.help, value: metric.value)
            }
        }
        text.counter("sse_gateway_bytes_written_total", help: "Bytes written to client sockets.",
                     value: counters.bytesWritten.load(ordering: .relaxed))
        text.counter("sse_gateway_connections_accepted_total", help: "Connections accepted.",
                     value: counters.accepted.load(ordering: .relaxed))
        text.counter("sse_gateway_connections_refused_total",
                     help: "Connections refused with 503: over the connection cap (max_connections) "
                         + "or over the cap for one client address (per_ip).",
                     samples: [(labels: [("reason", "max_connections")], value: counters.refused.load(ordering: .relaxed)),
                               (labels: [("reason", "per_ip")], value: counters.refusedPerAddress.load(ordering: .relaxed))])
        text.counter("sse_gateway_accept_backoffs_total", help: "Accepts deferred because descriptors ran out.",
                     value: counters.acceptBackoffs.load(ordering: .relaxed))
        text.counter("sse_gateway_tls_handshake_failures_total",
                     help: "TLS connections closed before their handshake completed.",
                     value: counters.tlsHandshakeFailures.load(ordering: .relaxed))
        text.counter("sse_gateway_stream_writes_blocked_total",
                     help: "Stream writes the client's socket did not take at once (a subscriber reading slower than it is sent to).",
                     value: counters.streamWritesBlocked.load(ordering: .relaxed))
        text.counter("sse_gateway_auth_failures_total",
                     help: "Requests refused for their token (missing, invalid, expired, forbidden).",
                     samples: AuthFailures.reasons.map { (labels: [("reason", $0)], value: authFailures.count($0)) })
        text.gauge("sse_gateway_open_files_limit", help: "The process's open-descriptor limit.", value: descriptorLimit)
        text.gauge("sse_gateway_ready", help: "1 while /readyz answers 200 (not draining, the cluster's Redis reachable), else 0.",
                   value: drain.isReady && engine.isReady ? 1 : 0)
        return HTTPResponse(status: .ok, headers: ["Content-Type": PrometheusText.contentType],
                            body: Array(text.text.utf8))
    }
}
