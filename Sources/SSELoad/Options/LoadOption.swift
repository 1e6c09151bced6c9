import GatewayAPI

/// One command-line option: its flag, what its value looks like (nil for a
/// switch), what it does, and its default as `--help` shows it.
struct LoadOption: Sendable {
    let name: String
    let placeholder: String?
    let summary: String
    let defaultText: @Sendable (LoadConfiguration) -> String

    static func named(_ name: String) -> LoadOption? { all.first { $0.name == name } }

    /// Every option, in the order `--help` lists them.
    static let all: [LoadOption] = [
        LoadOption(name: "url", placeholder: "URL",
                   summary: "Gateway base URL (http:// only for now). Give it once per node of a\n"
                    + "        cluster: subscribers are spread round-robin over the URLs.") {
            $0.targets.map(\.description).joined(separator: " ")
        },
        LoadOption(name: "publish-to", placeholder: "first|all",
                   summary: "Publishers on the first URL only, or spread round-robin over all.") { $0.publishTo.rawValue },
        LoadOption(name: "subscribers", placeholder: "N",
                   summary: "SSE connections to hold (at most \(LoadConfiguration.maxSubscribers)).") { "\($0.subscribers)" },
        LoadOption(name: "topics", placeholder: "N",
                   summary: "Topics <prefix>/0..N-1; subscriber j is on topic j % N.") { "\($0.topics)" },
        LoadOption(name: "channel", placeholder: "events|state",
                   summary: "Channel to subscribe to and publish on.") { $0.channel.rawValue },
        LoadOption(name: "publishers", placeholder: "N",
                   summary: "Keep-alive publishing connections (0: hold subscribers idle).") { "\($0.publishers)" },
        LoadOption(name: "rate", placeholder: "PER_SECOND",
                   summary: "Publishes/s across all publishers; 0 = as fast as acks return.") { "\(Int($0.rate))" },
        LoadOption(name: "size", placeholder: "BYTES",
                   summary: "Payload size (the timestamp header is never cut).") { "\($0.size)" },
        LoadOption(name: "publishes", placeholder: "N",
                   summary: "Stop publishing after N publishes in total (0 = no limit).") {
            "\($0.publishLimit ?? 0)"
        },
        LoadOption(name: "duration", placeholder: "DURATION",
                   summary: "How long to publish (or hold, with no publishers).") { DurationText.format($0.duration) },
        LoadOption(name: "ramp", placeholder: "DURATION",
                   summary: "Spread the subscribers' connects over this time.") { DurationText.format($0.ramp) },
        LoadOption(name: "connect-timeout", placeholder: "DURATION",
                   summary: "Time a subscriber has to connect and get its head.") { DurationText.format($0.connectTimeout) },
        LoadOption(name: "settle", placeholder: "DURATION",
                   summary: "Longest wait for in-flight deliveries after publishing.") { DurationText.format($0.settle) },
        LoadOption(name: "topic-prefix", placeholder: "NAME",
                   summary: "Topic names are <prefix>/<i>.") { $0.topicPrefix },
        LoadOption(name: "stall-after", placeholder: "N",
                   summary: "Subscribers stop reading after N deliveries until publishing ends.") {
            $0.stallAfter.map { "\($0)" } ?? "off"
        },
        LoadOption(name: "json", placeholder: nil,
                   summary: "Print one JSON line instead of the summary.") { $0.json ? "on" : "off" },
    ]

    /// The `--help` text, defaults read from `LoadConfiguration()`.
    static var usage: String {
        let defaults = LoadConfiguration()
        var lines = [
            "Usage: sse-load [options]",
            "",
            "Load for an SSE gateway from one process: subscribers connect over the ramp",
            "(GET /<channel>/<topic>), then publishers POST timestamped payloads for the",
            "duration; at the end it reports connections, publishes, deliveries, loss,",
            "duplicates, out-of-order deliveries and latency percentiles. With several",
            "--url (a cluster), loss, order and latency are counted across all of them:",
            "a delivery on one node of a publish made on another is checked the same way.",
            "",
            "Options:",
        ]
        for option in all {
            let flag = "  --\(option.name)" + (option.placeholder.map { " \($0)" } ?? "")
            lines.append(flag)
            lines.append("        \(option.summary) [default: \(option.defaultText(defaults))]")
        }
        lines += [
            "  -h, --help",
            "        Print this help and exit.",
            "",
            "Durations: 500ms, 30s, 2m, 1h, or a number of seconds.",
            "A live progress line is drawn when standard output is a terminal.",
            "Exit status: 0 after a run (read the report for loss), 1 if the run",
            "could not start, 2 for a bad command line.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
