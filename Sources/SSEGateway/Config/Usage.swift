/// The `--help` text.
///
/// Promises: every option of `GatewayOptions.all` appears with its flag, its
/// environment variable and its default, read from `GatewayConfiguration()`,
/// so the text cannot fall behind the code. Lines stay within 80 columns.
extension GatewayConfiguration {
    static var usage: String {
        let indent = String(repeating: " ", count: 8)
        var lines = [
            "Usage: sse-gateway [options]",
            "",
            "A server-sent events gateway. Subscribe with GET /state/<topic> (latest",
            "value, then updates) or GET /events/<topic> (every event, in order);",
            "publish with POST to the same path.",
            "",
            "Every option can also be set by the environment variable shown with it.",
            "A flag wins over the environment, which wins over the default.",
            "",
            "Options:",
        ]
        let defaults = GatewayConfiguration()
        for option in GatewayOptions.all {
            switch option.kind {
            case .value(let placeholder): lines.append("  \(option.flag) \(placeholder)")
            case .toggle: lines.append("  \(option.flag)[=BOOL]")
            }
            lines.append(indent + option.summary)
            lines.append(indent + "[\(option.environmentVariable); default: \(option.defaultText(defaults))]")
        }
        lines += [
            "  -h, --help",
            indent + "Print this help and exit.",
            "  --version",
            indent + "Print the version and exit.",
            "",
            "Durations: 500ms, 15s, 2m, 1h, or a number of seconds (1.5 is 1500ms).",
            "Sizes: bytes, or with a unit of 1024: 64k or 64KiB, 1m or 1MiB, 1g or 1GiB.",
            "BOOL and switch variables: true/false, 1/0 or yes/no.",
            "Give --tls-cert and --tls-key together, or neither.",
            "Give at most one of --jwt-secret and --jwt-public-key; --subscribe-auth token",
            "and --jwt-audience need one of them.",
        ]
        return lines.joined(separator: "\n") + "\n"
    }
}
