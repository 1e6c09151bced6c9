import GatewayAPI

/// The report for people: a few aligned lines, figures rounded for reading.
extension LoadReport {
    var summary: String {
        let c = configuration
        let rate = c.rate > 0 ? "\(Self.number(c.rate))/s" : "full speed"
        var lines = [
            "sse-load \(c.targets.map(\.description).joined(separator: " + ")) — \(Self.count(c.subscribers, "subscriber")) on \(Self.count(c.topics, "topic")) "
                + "(/\(c.channel.rawValue)), \(Self.count(c.publishers, "publisher")) at \(rate), "
                + "\(c.size)-byte payloads, \(DurationText.format(c.duration))",
        ]
        var connect = "\(connectionsEstablished) established, \(connectionsFailed) failed"
        if let connectSeconds { connect += ", last after \(Self.number(connectSeconds)) s" }
        if !connectLatency.isEmpty {
            connect += " (connect p50 \(Self.ms(Self.milliseconds(connectLatency, 50)))"
                + ", p99 \(Self.ms(Self.milliseconds(connectLatency, 99))) ms)"
        }
        lines.append(Self.row("connections", connect))
        if c.targets.count > 1 {
            let split = zip(c.targets, connectionsPerURL).map { "\($1) on \($0)" }.joined(separator: ", ")
            lines.append(Self.row("", "\(split); publishers on \(c.publishTo == .all ? "every URL" : "the first URL")"))
        }
        var publishes = "\(publishesAttempted) attempted, \(publishesAcked) acked, \(publishesFailed) failed; "
            + "\(Self.number(achievedPublishRate))/s achieved"
        if !publishLatency.isEmpty {
            publishes += " (ack p50 \(Self.ms(Self.milliseconds(publishLatency, 50)))"
                + ", p99 \(Self.ms(Self.milliseconds(publishLatency, 99))) ms)"
        }
        lines.append(Self.row("publishes", publishes))
        let lossText = loss.map { "loss \($0)" } ?? "loss not counted on /state (values coalesce)"
        lines.append(Self.row("deliveries", "\(eventsReceived) received, \(expectedDeliveries) expected; \(lossText), "
            + "\(duplicates) duplicates, \(outOfOrder) out of order"
            + (unrecognizedEvents > 0 ? ", \(unrecognizedEvents) unrecognized" : "")))
        if serverCountedDeliveries != expectedDeliveries || subscriberCountMismatches > 0 {
            let counted = serverCountedDeliveries.map { "\($0)" } ?? "not given in every reply"
            lines.append(Self.row("", "the server counted \(counted) (\(subscriberCountMismatches) publishes "
                + "whose reply's subscriber count differed from the subscribers streaming here)"))
        }
        lines.append(Self.row("throughput", "\(Self.number(deliveriesPerSecond)) deliveries/s"))
        if latency.isEmpty {
            lines.append(Self.row("latency", "no samples"))
        } else {
            let percentiles = [("p50", 50.0), ("p90", 90), ("p99", 99), ("p99.9", 99.9)].map { name, p in
                "\(name) \(Self.ms(Self.milliseconds(latency, p)))"
            }
            lines.append(Self.row("latency ms", (percentiles + ["max \(Self.ms(Self.maxMilliseconds(latency)))"])
                .joined(separator: "  ") + "  (\(latency.count) samples)"))
        }
        lines.append(Self.row("disconnects", "\(endedEarly) streams ended early; "
            + "\(notOnLatest) subscribers not on their topic's newest value"))
        if let firstError { lines.append(Self.row("first error", firstError)) }
        lines.append(Self.row("elapsed", "\(Self.number(elapsedSeconds)) s; sse-load used \(Self.number(loadCPUSeconds)) s of CPU"))
        return lines.joined(separator: "\n")
    }

    private static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }

    private static func row(_ label: String, _ text: String) -> String {
        label.padding(to: 13) + text
    }

    /// Milliseconds with three significant figures or so.
    static func ms(_ value: Double?) -> String {
        guard let value else { return "-" }
        if value >= 100 { return "\(Int(value.rounded()))" }
        if value >= 10 { return number(value, decimals: 1) }
        return number(value, decimals: value >= 1 ? 2 : 3)
    }

    /// A number rounded to `decimals` places, without a trailing `.0`.
    static func number(_ value: Double, decimals: Int = 1) -> String {
        guard value.isFinite else { return "-" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        if rounded == rounded.rounded() && abs(rounded) < 1e15 { return "\(Int(rounded))" }
        return "\(rounded)"
    }
}

extension String {
    /// The string padded with spaces to at least `width` characters.
    func padding(to width: Int) -> String {
        count >= width ? self + " " : self + String(repeating: " ", count: width - count)
    }
}
