import GatewayAPI

/// `--json`: the report as one line of JSON with snake_case keys, for scripts.
///
/// Promises: one line, keys always present and in a fixed order; times in
/// seconds (`_s`) or milliseconds (`_ms`); a figure that does not exist in a
/// run (a latency with no samples, `loss` on `/state`, no error) is `null`.
extension LoadReport {
    var jsonLine: String {
        let configuration = configuration
        var json = JSONLine()
        json.add("tool", .string("sse-load"))
        json.add("url", .string(configuration.target.description))
        json.add("urls", .array(configuration.targets.map { .string($0.description) }))
        json.add("publish_to", .string(configuration.publishTo.rawValue))
        json.add("channel", .string(configuration.channel.rawValue))
        json.add("subscribers", .int(configuration.subscribers))
        json.add("topics", .int(configuration.topics))
        json.add("publishers", .int(configuration.publishers))
        json.add("rate", .double(configuration.rate))
        json.add("size", .int(configuration.size))
        json.add("duration_s", .double(DurationText.seconds(configuration.duration)))
        json.add("ramp_s", .double(DurationText.seconds(configuration.ramp)))
        json.add("connections_established", .int(connectionsEstablished))
        json.add("connections_failed", .int(connectionsFailed))
        json.add("connections_per_url", .array(connectionsPerURL.map(JSONLine.Value.int)))
        json.add("connect_s", connectSeconds.map(JSONLine.Value.double) ?? .null)
        json.add("connect_p50_ms", .optional(Self.milliseconds(connectLatency, 50)))
        json.add("connect_p99_ms", .optional(Self.milliseconds(connectLatency, 99)))
        json.add("connect_max_ms", .optional(Self.maxMilliseconds(connectLatency)))
        json.add("publishes_attempted", .int(publishesAttempted))
        json.add("publishes_acked", .int(publishesAcked))
        json.add("publishes_failed", .int(publishesFailed))
        json.add("publish_s", .double(publishSeconds))
        json.add("publish_rate_achieved", .double(achievedPublishRate))
        json.add("publish_ack_p50_ms", .optional(Self.milliseconds(publishLatency, 50)))
        json.add("publish_ack_p99_ms", .optional(Self.milliseconds(publishLatency, 99)))
        json.add("events_received", .int(eventsReceived))
        json.add("unique_deliveries", .int(uniqueDeliveries))
        json.add("expected_deliveries", .int(expectedDeliveries))
        json.add("server_counted_deliveries", serverCountedDeliveries.map(JSONLine.Value.int) ?? .null)
        json.add("subscriber_count_mismatches", .int(subscriberCountMismatches))
        json.add("loss", loss.map(JSONLine.Value.int) ?? .null)
        json.add("duplicates", .int(duplicates))
        json.add("out_of_order", .int(outOfOrder))
        json.add("unrecognized_events", .int(unrecognizedEvents))
        json.add("deliveries_per_s", .double(deliveriesPerSecond))
        json.add("latency_samples", .int(Int(latency.count)))
        json.add("latency_p50_ms", .optional(Self.milliseconds(latency, 50)))
        json.add("latency_p90_ms", .optional(Self.milliseconds(latency, 90)))
        json.add("latency_p99_ms", .optional(Self.milliseconds(latency, 99)))
        json.add("latency_p999_ms", .optional(Self.milliseconds(latency, 99.9)))
        json.add("latency_max_ms", .optional(Self.maxMilliseconds(latency)))
        json.add("slow_subscriber_disconnects", .int(endedEarly))
        json.add("not_on_latest", .int(notOnLatest))
        json.add("elapsed_s", .double(elapsedSeconds))
        json.add("load_cpu_s", .double(loadCPUSeconds))
        json.add("error", firstError.map(JSONLine.Value.string) ?? .null)
        return json.text
    }
}

/// A flat JSON object built key by key, in order.
struct JSONLine {
    indirect enum Value {
        case string(String)
        case array([Value])
        case int(Int)
        case double(Double)
        case null

        static func optional(_ value: Double?) -> Value { value.map(Value.double) ?? .null }
    }

    private var fields: [String] = []

    mutating func add(_ key: String, _ value: Value) {
        fields.append("\"\(key)\":\(Self.encode(value))")
    }

    var text: String { "{" + fields.joined(separator: ",") + "}" }

    private static func encode(_ value: Value) -> String {
        switch value {
        case .string(let text): return quote(text)
        case .int(let number): return "\(number)"
        case .null: return "null"
        case .array(let values): return "[" + values.map(encode).joined(separator: ",") + "]"
        case .double(let number):
            guard number.isFinite else { return "null" }
            let rounded = (number * 1000).rounded() / 1000
            if rounded == rounded.rounded(), abs(rounded) < 1e15 { return "\(Int(rounded))" }
            return "\(rounded)"
        }
    }

    private static func quote(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
