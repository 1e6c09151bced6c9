import GatewayAPI
import JWT
import RedisClient

/// One setting of the command line: its flag, its environment variable, how
/// its text becomes a configuration field, and how `--help` shows it.
///
/// The environment variable is derived from the flag (`--max-body` →
/// `SSE_GATEWAY_MAX_BODY`), so the two names can never disagree.
struct GatewayOption: Sendable {
    /// Whether the option takes a value or is a switch.
    enum Kind: Sendable, Equatable {
        /// `--flag VALUE` or `--flag=VALUE`; the placeholder names the value in `--help`.
        case value(placeholder: String)
        /// `--flag` alone means true; `--flag=BOOL` and the environment take a yes/no value.
        case toggle
    }

    /// The flag without its leading dashes, e.g. `max-body`.
    let name: String
    let kind: Kind
    /// One line for `--help`.
    let summary: String
    /// A secret's value is never repeated in an error message (it would land in logs).
    var isSecret = false
    /// The default as `--help` shows it, read from `GatewayConfiguration()`.
    let defaultText: @Sendable (GatewayConfiguration) -> String
    /// Reads the option's text into the configuration, or says what was expected.
    let apply: @Sendable (inout GatewayConfiguration, String) throws(ValueProblem) -> Void

    /// The flag as typed, e.g. `--max-body`.
    var flag: String { "--" + name }

    /// The environment variable, e.g. `SSE_GATEWAY_MAX_BODY`.
    var environmentVariable: String {
        "SSE_GATEWAY_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
    }
}

/// Every option the gateway understands, in the order `--help` lists them.
/// `--help` and `--version` are handled by the parser and are not listed here.
enum GatewayOptions {
    static let all: [GatewayOption] = [
        GatewayOption(name: "host", kind: .value(placeholder: "ADDR"),
                      summary: "Address to listen on.",
                      defaultText: { $0.host },
                      apply: { config, text throws(ValueProblem) in config.host = try OptionValue.word(text) }),
        GatewayOption(name: "port", kind: .value(placeholder: "PORT"),
                      summary: "TCP port to listen on (0 picks a free port).",
                      defaultText: { "\($0.port)" },
                      apply: { config, text throws(ValueProblem) in
                          config.port = try OptionValue.integer(text, in: 0...65535) }),
        GatewayOption(name: "public", kind: .value(placeholder: "DIR"),
                      summary: "Directory served at / instead of the page built into the executable.",
                      defaultText: { $0.publicDirectory ?? "none (the built-in page)" },
                      apply: { config, text throws(ValueProblem) in config.publicDirectory = try OptionValue.text(text) }),
        GatewayOption(name: "retry-ms", kind: .value(placeholder: "MS"),
                      summary: "Reconnect delay sent to clients in the retry: line, in ms.",
                      defaultText: { "\($0.retryMilliseconds)" },
                      apply: { config, text throws(ValueProblem) in
                          config.retryMilliseconds = try OptionValue.integer(text, in: 0...86_400_000) }),
        GatewayOption(name: "heartbeat", kind: .value(placeholder: "DURATION"),
                      summary: "Silence after which a stream gets a ': hb' comment.",
                      defaultText: { OptionValue.format($0.heartbeatInterval) },
                      apply: { config, text throws(ValueProblem) in
                          config.heartbeatInterval = try OptionValue.duration(text, allowZero: false) }),
        GatewayOption(name: "events-queue-limit", kind: .value(placeholder: "COUNT"),
                      summary: "Pending events before a slow /events subscriber is cut.",
                      defaultText: { "\($0.eventsQueueLimit)" },
                      apply: { config, text throws(ValueProblem) in
                          config.eventsQueueLimit = try OptionValue.integer(text, in: 1...1_000_000) }),
        GatewayOption(name: "replay-count", kind: .value(placeholder: "COUNT"),
                      summary: "Events kept per topic for Last-Event-ID (0: no resuming).",
                      defaultText: { "\($0.replayCount)" },
                      apply: { config, text throws(ValueProblem) in
                          config.replayCount = try OptionValue.integer(text, in: 0...1_000_000) }),
        GatewayOption(name: "replay-max-age", kind: .value(placeholder: "DURATION"),
                      summary: "Age after which an event leaves the replay window.",
                      defaultText: { OptionValue.format($0.replayMaxAge) },
                      apply: { config, text throws(ValueProblem) in
                          config.replayMaxAge = try OptionValue.duration(text, allowZero: false) }),
        GatewayOption(name: "max-body", kind: .value(placeholder: "SIZE"),
                      summary: "Largest publish body (413 past it).",
                      defaultText: { OptionValue.format(bytes: $0.maxBodyBytes) },
                      apply: { config, text throws(ValueProblem) in config.maxBodyBytes = try OptionValue.size(text) }),
        GatewayOption(name: "max-header-bytes", kind: .value(placeholder: "SIZE"),
                      summary: "Largest request line plus headers (431 past it).",
                      defaultText: { OptionValue.format(bytes: $0.maxHeaderBytes) },
                      apply: { config, text throws(ValueProblem) in
                          config.maxHeaderBytes = try OptionValue.size(
                              text, atLeast: (1024, "a browser's request head alone is 400 to 800 bytes")) }),
        GatewayOption(name: "max-uri", kind: .value(placeholder: "SIZE"),
                      summary: "Longest request target (414 past it).",
                      defaultText: { OptionValue.format(bytes: $0.maxURIBytes) },
                      apply: { config, text throws(ValueProblem) in config.maxURIBytes = try OptionValue.size(text) }),
        GatewayOption(name: "max-connections", kind: .value(placeholder: "COUNT"),
                      summary: "Open connections allowed at once, or 'auto'.",
                      defaultText: { $0.maxConnections.map { "\($0)" } ?? "auto (from the open-file limit)" },
                      apply: { config, text throws(ValueProblem) in
                          config.maxConnections = text == "auto"
                              ? nil : try OptionValue.integer(text, in: 1...1_000_000) }),
        GatewayOption(name: "max-connections-per-ip", kind: .value(placeholder: "COUNT"),
                      summary: "Connections allowed from one client address, or 'off'.",
                      defaultText: { $0.maxConnectionsPerIP.map { "\($0)" } ?? "off" },
                      apply: { config, text throws(ValueProblem) in
                          config.maxConnectionsPerIP = text == "off"
                              ? nil : try OptionValue.integer(text, in: 1...1_000_000) }),
        GatewayOption(name: "loops", kind: .value(placeholder: "COUNT"),
                      summary: "Event-loop threads (connections and topics spread), or 'auto'.",
                      defaultText: { $0.loops.map { "\($0)" } ?? "auto (one per core it may use)" },
                      apply: { config, text throws(ValueProblem) in
                          config.loops = text == "auto" ? nil : try OptionValue.integer(text, in: 1...256) }),
        GatewayOption(name: "header-timeout", kind: .value(placeholder: "DURATION"),
                      summary: "Time a connection has to send its request head.",
                      defaultText: { OptionValue.format($0.headerTimeout) },
                      apply: { config, text throws(ValueProblem) in
                          config.headerTimeout = try OptionValue.duration(text, allowZero: false) }),
        GatewayOption(name: "idle-timeout", kind: .value(placeholder: "DURATION"),
                      summary: "Time an idle keep-alive connection stays open.",
                      defaultText: { OptionValue.format($0.idleTimeout) },
                      apply: { config, text throws(ValueProblem) in
                          config.idleTimeout = try OptionValue.duration(text, allowZero: false) }),
        GatewayOption(name: "body-timeout", kind: .value(placeholder: "DURATION"),
                      summary: "Time a request body has to arrive.",
                      defaultText: { OptionValue.format($0.bodyTimeout) },
                      apply: { config, text throws(ValueProblem) in
                          config.bodyTimeout = try OptionValue.duration(text, allowZero: false) }),
        GatewayOption(name: "publish-token", kind: .value(placeholder: "TOKEN"),
                      summary: "Require 'Authorization: Bearer TOKEN' on every POST.",
                      isSecret: true,
                      defaultText: { $0.publishToken == nil ? "none (publishing is open)" : "set" },
                      apply: { config, text throws(ValueProblem) in config.publishToken = try OptionValue.word(text) }),
        GatewayOption(name: "jwt-secret", kind: .value(placeholder: "SECRET"),
                      summary: "Accept HS256 tokens signed with SECRET (at least 32 bytes).",
                      isSecret: true,
                      defaultText: { $0.jwtSecret == nil ? "none" : "set" },
                      apply: { config, text throws(ValueProblem) in
                          config.jwtSecret = try OptionValue.secret(text, minimumBytes: JWTKey.minimumSecretBytes) }),
        GatewayOption(name: "jwt-public-key", kind: .value(placeholder: "PATH"),
                      summary: "Accept RS256 (RSA) or ES256 (EC P-256) tokens for this PEM public key.",
                      defaultText: { $0.jwtPublicKey ?? "none" },
                      apply: { config, text throws(ValueProblem) in config.jwtPublicKey = try OptionValue.text(text) }),
        GatewayOption(name: "jwt-audience", kind: .value(placeholder: "AUD"),
                      summary: "Accept only tokens whose aud contains AUD.",
                      defaultText: { $0.jwtAudience ?? "none (aud not checked)" },
                      apply: { config, text throws(ValueProblem) in config.jwtAudience = try OptionValue.text(text) }),
        GatewayOption(name: "subscribe-auth", kind: .value(placeholder: "open|token"),
                      summary: "token: every subscription needs a token granting its topics.",
                      defaultText: { $0.subscribeAuth.rawValue },
                      apply: { config, text throws(ValueProblem) in
                          guard let mode = SubscribeAuth(rawValue: text) else {
                              throw ValueProblem(expectation: "expected open or token")
                          }
                          config.subscribeAuth = mode
                      }),
        GatewayOption(name: "cors-origin", kind: .value(placeholder: "ORIGIN"),
                      summary: "Value of Access-Control-Allow-Origin.",
                      defaultText: { $0.corsOrigin },
                      apply: { config, text throws(ValueProblem) in config.corsOrigin = try OptionValue.word(text) }),
        GatewayOption(name: "shutdown-grace", kind: .value(placeholder: "DURATION"),
                      summary: "Time streams get to end cleanly on SIGTERM/SIGINT.",
                      defaultText: { OptionValue.format($0.shutdownGrace) },
                      apply: { config, text throws(ValueProblem) in
                          config.shutdownGrace = try OptionValue.duration(text, allowZero: true) }),
        GatewayOption(name: "drain-delay", kind: .value(placeholder: "DURATION"),
                      summary: "On SIGTERM/SIGINT, time streams go on after /readyz turned 503.",
                      defaultText: { OptionValue.format($0.drainDelay) },
                      apply: { config, text throws(ValueProblem) in
                          config.drainDelay = try OptionValue.duration(text, allowZero: true) }),
        GatewayOption(name: "drain-spread", kind: .value(placeholder: "DURATION"),
                      summary: "Then streams end with a retry: drawn at random up to this (24h at most).",
                      defaultText: { OptionValue.format($0.drainSpread) },
                      apply: { config, text throws(ValueProblem) in
                          // It becomes a retry: line, which --retry-ms bounds at 24 h (a browser's
                          // timer takes at most 2^31 − 1 ms, about 24.8 days).
                          config.drainSpread = try OptionValue.duration(text, allowZero: true, upTo: (
                              .seconds(86_400), "24h", "it is sent as a retry: line, bounded as --retry-ms is")) }),
        GatewayOption(name: "access-log", kind: .toggle,
                      summary: "Log one line per request to standard output.",
                      defaultText: { $0.accessLog ? "on" : "off" },
                      apply: { config, text throws(ValueProblem) in config.accessLog = try OptionValue.boolean(text) }),
        GatewayOption(name: "redis", kind: .value(placeholder: "URL"),
                      summary: "Join a cluster on Redis: redis://, redis+sentinel://, redis+cluster://.",
                      isSecret: true,
                      defaultText: { $0.redis.map(\.description) ?? "none (everything in this process)" },
                      apply: { config, text throws(ValueProblem) in
                          do throws(RedisURLError) {
                              config.redis = try RedisEndpoint(parsing: text)
                          } catch {
                              throw ValueProblem(expectation: "a URL redis://[[user]:password@]host[:port][/db] or "
                                                 + "redis+sentinel://host:port[,host:port…]/<master-name>[/db] or "
                                                 + "redis+cluster://host:port[,host:port…] (\(error.reason))")
                          }
                      }),
        GatewayOption(name: "redis-min-replicas", kind: .value(placeholder: "N"),
                      summary: "Acknowledge a publish once N Redis replicas hold it (WAIT), else 503.",
                      defaultText: { String($0.redisMinReplicas) },
                      apply: { config, text throws(ValueProblem) in
                          guard text.utf8.count <= 3, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                                let number = Int(text), number <= 100 else {
                              throw ValueProblem(expectation: "expected a number of replicas from 0 to 100")
                          }
                          config.redisMinReplicas = number
                      }),
        GatewayOption(name: "tls-cert", kind: .value(placeholder: "PATH"),
                      summary: "PEM certificate chain; serve HTTPS (needs --tls-key).",
                      defaultText: { $0.tlsCertificate ?? "none" },
                      apply: { config, text throws(ValueProblem) in config.tlsCertificate = try OptionValue.text(text) }),
        GatewayOption(name: "tls-key", kind: .value(placeholder: "PATH"),
                      summary: "PEM private key for --tls-cert.",
                      defaultText: { $0.tlsKey ?? "none" },
                      apply: { config, text throws(ValueProblem) in config.tlsKey = try OptionValue.text(text) }),
        // HTTP/2 (API.md "HTTP/2").
        GatewayOption(name: "http2", kind: .value(placeholder: "on|off"),
                      summary: "Speak HTTP/2 too: ALPN h2 over TLS, prior knowledge in cleartext.",
                      defaultText: { $0.http2 ? "on" : "off" },
                      apply: { config, text throws(ValueProblem) in
                          switch text.lowercased() {
                          case "on": config.http2 = true
                          case "off": config.http2 = false
                          default:
                              do throws(ValueProblem) {
                                  config.http2 = try OptionValue.boolean(text)
                              } catch {
                                  throw ValueProblem(expectation: "expected on or off")
                              }
                          }
                      }),
        GatewayOption(name: "http2-max-concurrent-streams", kind: .value(placeholder: "COUNT"),
                      summary: "Streams (SSE subscriptions included) one HTTP/2 connection may hold.",
                      defaultText: { "\($0.http2MaxConcurrentStreams)" },
                      apply: { config, text throws(ValueProblem) in
                          config.http2MaxConcurrentStreams = try OptionValue.integer(text, in: 1...10_000) }),
    ]

    /// The option whose flag is `--name`, if any.
    static func named(_ name: Substring) -> GatewayOption? {
        all.first { $0.name == name }
    }
}
