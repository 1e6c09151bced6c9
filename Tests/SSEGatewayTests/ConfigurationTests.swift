import RedisClient
import HTTPCore
import Testing
@testable import SSEGateway

/// Parses and returns the configuration to run with, failing the test on help, version or error.
private func configuration(_ arguments: [String], _ environment: [String: String] = [:]) throws -> GatewayConfiguration {
    let outcome = try GatewayConfiguration.parse(arguments: arguments, environment: environment)
    guard case .run(let configuration) = outcome else {
        Issue.record("expected a configuration to run with, got \(outcome)")
        return GatewayConfiguration()
    }
    return configuration
}

/// The error message for a command line that must be refused, or nil when it was accepted.
private func refusal(_ arguments: [String], _ environment: [String: String] = [:]) -> String? {
    do {
        _ = try GatewayConfiguration.parse(arguments: arguments, environment: environment)
        return nil
    } catch {
        return error.message
    }
}

/// The default configuration with one change.
private func defaults(_ change: (inout GatewayConfiguration) -> Void) -> GatewayConfiguration {
    var configuration = GatewayConfiguration()
    change(&configuration)
    return configuration
}

struct ConfigurationTests {
    /// Every flag the gateway documents, as a user types it.
    static let documentedFlags = [
        "--host", "--port", "--public", "--retry-ms", "--heartbeat", "--events-queue-limit", "--replay-count",
        "--replay-max-age", "--max-body", "--max-header-bytes", "--max-uri", "--max-connections",
        "--loops", "--header-timeout", "--idle-timeout", "--body-timeout", "--publish-token",
        "--jwt-secret", "--jwt-public-key", "--jwt-audience", "--subscribe-auth", "--cors-origin",
        "--shutdown-grace", "--access-log", "--redis", "--redis-min-replicas", "--tls-cert", "--tls-key",
        "--drain-delay", "--drain-spread", "--max-connections-per-ip",
        "--http2", "--http2-max-concurrent-streams",
    ]

    /// One value for every option (TLS is tested on its own: it needs a pair; so are
    /// `--jwt-audience` and `--subscribe-auth`, which need a key: TokenConfigurationTests).
    static let oneValueEach: [(name: String, text: String, expected: GatewayConfiguration)] = [
        ("host", "0.0.0.0", defaults { $0.host = "0.0.0.0" }),
        ("redis", "redis://:secret@10.0.0.5:6380/2", defaults {
            $0.redis = .server(RedisURL(host: "10.0.0.5", port: 6380, user: nil, password: "secret", database: 2))
        }),
        ("redis", "redis+sentinel://:pw@10.0.0.5:26379,10.0.0.6/main/3", defaults {
            $0.redis = .sentinel(RedisSentinelURL(
                sentinels: [RedisURL(host: "10.0.0.5", port: 26379), RedisURL(host: "10.0.0.6", port: 26379)],
                masterName: "main", password: "pw", database: 3))
        }),
        ("redis", "redis+cluster://:pw@10.0.0.5:7000,10.0.0.6:7001", defaults {
            $0.redis = .cluster(RedisClusterURL(
                seeds: [RedisURL(host: "10.0.0.5", port: 7000), RedisURL(host: "10.0.0.6", port: 7001)], password: "pw"))
        }),
        ("port", "9000", defaults { $0.port = 9000 }),
        ("public", "/srv/www", defaults { $0.publicDirectory = "/srv/www" }),
        ("retry-ms", "500", defaults { $0.retryMilliseconds = 500 }),
        ("heartbeat", "30s", defaults { $0.heartbeatInterval = .seconds(30) }),
        ("events-queue-limit", "64", defaults { $0.eventsQueueLimit = 64 }),
        ("replay-count", "0", defaults { $0.replayCount = 0 }),
        ("replay-max-age", "1h", defaults { $0.replayMaxAge = .seconds(3600) }),
        ("max-body", "1MiB", defaults { $0.maxBodyBytes = 1 << 20 }),
        ("max-header-bytes", "32k", defaults { $0.maxHeaderBytes = 32 * 1024 }),
        ("max-uri", "2048", defaults { $0.maxURIBytes = 2048 }),
        ("max-connections", "500", defaults { $0.maxConnections = 500 }),
        ("max-connections-per-ip", "20", defaults { $0.maxConnectionsPerIP = 20 }),
        ("drain-delay", "10s", defaults { $0.drainDelay = .seconds(10) }),
        ("drain-spread", "0", defaults { $0.drainSpread = .zero }),
        ("loops", "4", defaults { $0.loops = 4 }),
        ("header-timeout", "500ms", defaults { $0.headerTimeout = .milliseconds(500) }),
        ("idle-timeout", "2m", defaults { $0.idleTimeout = .seconds(120) }),
        ("body-timeout", "3", defaults { $0.bodyTimeout = .seconds(3) }),
        ("publish-token", "s3cret-T0ken", defaults { $0.publishToken = "s3cret-T0ken" }),
        ("jwt-secret", String(repeating: "k", count: 32), defaults { $0.jwtSecret = String(repeating: "k", count: 32) }),
        ("jwt-public-key", "/etc/sse-gateway/jwt.pem", defaults { $0.jwtPublicKey = "/etc/sse-gateway/jwt.pem" }),
        ("cors-origin", "https://app.example", defaults { $0.corsOrigin = "https://app.example" }),
        ("shutdown-grace", "0", defaults { $0.shutdownGrace = .zero }),
        ("access-log", "true", defaults { $0.accessLog = true }),
        ("http2", "off", defaults { $0.http2 = false }),
        ("http2-max-concurrent-streams", "250", defaults { $0.http2MaxConcurrentStreams = 250 }),
    ]

    /// Starting with no arguments and no environment gives the documented defaults.
    @Test func defaultsAreTheDocumentedOnes() throws {
        let c = try configuration([])
        #expect(c == GatewayConfiguration())
        #expect(c.host == "127.0.0.1" && c.port == 8080 && c.publicDirectory == nil)
        #expect(c.retryMilliseconds == 2000 && c.heartbeatInterval == .seconds(15))
        #expect(c.eventsQueueLimit == 1024 && c.replayCount == 256 && c.replayMaxAge == .seconds(300))
        #expect(c.maxBodyBytes == 65536 && c.maxHeaderBytes == 16384 && c.maxURIBytes == 8192)
        #expect(c.maxConnections == nil && c.loops == nil)
        #expect(c.drainDelay == .zero && c.drainSpread == .seconds(5) && c.maxConnectionsPerIP == nil)
        #expect(c.headerTimeout == .seconds(10) && c.idleTimeout == .seconds(60) && c.bodyTimeout == .seconds(10))
        #expect(c.publishToken == nil && c.corsOrigin == "*" && c.shutdownGrace == .seconds(2) && !c.accessLog)
        #expect(c.tlsCertificate == nil && c.tlsKey == nil)
        #expect(c.http2 && c.http2MaxConcurrentStreams == 128)
        #expect(c.jwtSecret == nil && c.jwtPublicKey == nil && c.jwtAudience == nil && c.subscribeAuth == .open)
    }

    /// The parser knows exactly the documented flags, and the per-option table covers them all.
    @Test func everyDocumentedFlagIsKnown() {
        let known = Set(GatewayOptions.all.map(\.flag))
        #expect(known == Set(Self.documentedFlags))
        #expect(Set(Self.oneValueEach.map { "--" + $0.name })
            == known.subtracting(["--tls-cert", "--tls-key", "--jwt-audience", "--subscribe-auth", "--redis-min-replicas"]))
    }

    /// `--redis-min-replicas` is read with `--redis` (flag or variable); without it, or with a value
    /// that is not a count from 0 to 100, the gateway refuses to start, saying why.
    @Test func minReplicasNeedRedis() throws {
        #expect(try configuration(["--redis", "redis://h", "--redis-min-replicas", "2"]).redisMinReplicas == 2)
        #expect(try configuration([], ["SSE_GATEWAY_REDIS": "redis+sentinel://h/m",
                                        "SSE_GATEWAY_REDIS_MIN_REPLICAS": "1"]).redisMinReplicas == 1)
        #expect(refusal(["--redis-min-replicas", "1"]) == "--redis-min-replicas (or SSE_GATEWAY_REDIS_MIN_REPLICAS) needs "
            + "--redis (or SSE_GATEWAY_REDIS): without Redis there are no replicas")
        #expect(refusal(["--redis", "redis://h", "--redis-min-replicas", "101"])
            == "invalid value '101' for --redis-min-replicas: expected a number of replicas from 0 to 100")
        #expect(refusal(["--redis", "redis+sentinel://h"])?.contains("the master's name is missing") == true)
        #expect(refusal(["--redis", "redis+cluster://h:7000/3"])?.contains("a Redis Cluster has only database 0") == true)
        #expect(refusal(["--redis", "redis+cluster://h:7000,,h:7001"])?.contains("an empty node") == true)
    }

    /// `--flag value` sets the option.
    @Test(arguments: oneValueEach)
    func flagWithSeparateValue(name: String, text: String, expected: GatewayConfiguration) throws {
        // A switch takes no separate value: `--access-log` alone is its "true".
        let arguments = name == "access-log" ? ["--access-log"] : ["--\(name)", text]
        #expect(try configuration(arguments) == expected)
    }

    /// `--flag=value` sets the option.
    @Test(arguments: oneValueEach)
    func flagWithEqualsValue(name: String, text: String, expected: GatewayConfiguration) throws {
        #expect(try configuration(["--\(name)=\(text)"]) == expected)
    }

    /// `SSE_GATEWAY_<NAME>` sets the option when no flag does.
    @Test(arguments: oneValueEach)
    func environmentVariable(name: String, text: String, expected: GatewayConfiguration) throws {
        let variable = "SSE_GATEWAY_" + String(name.uppercased().map { $0 == "-" ? "_" : $0 })
        #expect(try configuration([], [variable: text]) == expected)
    }

    /// Environment variable names follow the flag names.
    @Test func environmentVariableNames() {
        let names = GatewayOptions.all.map(\.environmentVariable)
        #expect(names.contains("SSE_GATEWAY_PORT"))
        #expect(names.contains("SSE_GATEWAY_PUBLISH_TOKEN"))
        #expect(names.contains("SSE_GATEWAY_MAX_BODY"))
        #expect(names.contains("SSE_GATEWAY_EVENTS_QUEUE_LIMIT"))
        #expect(names.contains("SSE_GATEWAY_TLS_CERT"))
    }

    /// A flag wins over the environment, which wins over the default.
    @Test func flagBeatsEnvironmentBeatsDefault() throws {
        let environment = ["SSE_GATEWAY_PORT": "9001", "SSE_GATEWAY_HOST": "0.0.0.0"]
        let c = try configuration(["--port", "9002"], environment)
        #expect(c.port == 9002)
        #expect(c.host == "0.0.0.0")
        #expect(c.retryMilliseconds == 2000)
    }

    /// A bad environment value is not read when a flag overrides it.
    @Test func flagOverridesABadEnvironmentValue() throws {
        #expect(try configuration(["--port=81"], ["SSE_GATEWAY_PORT": "eighty"]).port == 81)
    }

    /// Unrelated environment variables, even with the gateway's prefix, are ignored.
    @Test func unrelatedEnvironmentIsIgnored() throws {
        #expect(try configuration([], ["SSE_GATEWAY_HOME": "/x", "PORT": "1"]) == GatewayConfiguration())
    }

    /// Giving a flag twice keeps the last value.
    @Test func lastFlagWins() throws {
        #expect(try configuration(["--port", "1", "--port=2"]).port == 2)
    }

    /// `--access-log` alone switches logging on; `=BOOL` and the environment take yes/no words.
    @Test func accessLogSwitch() throws {
        #expect(try configuration(["--access-log"]).accessLog)
        #expect(try !configuration(["--access-log=false"]).accessLog)
        #expect(try !configuration(["--access-log=no"], ["SSE_GATEWAY_ACCESS_LOG": "yes"]).accessLog)
        for word in ["true", "1", "yes", "YES", "True"] {
            #expect(try configuration([], ["SSE_GATEWAY_ACCESS_LOG": word]).accessLog)
        }
        for word in ["false", "0", "no", "No"] {
            #expect(try !configuration([], ["SSE_GATEWAY_ACCESS_LOG": word]).accessLog)
        }
        // A switch never swallows the next argument.
        #expect(refusal(["--access-log", "true"]) == "unexpected argument 'true' (the gateway takes only options)")
    }

    /// `--loops auto` (as by default) leaves the count to the CPU affinity at start; a count outside 1…256 is refused.
    @Test func loopsAutoAndItsRange() throws {
        #expect(try configuration(["--loops", "auto"], ["SSE_GATEWAY_LOOPS": "3"]).loops == nil)
        #expect(try configuration([], ["SSE_GATEWAY_LOOPS": "3"]).loops == 3)
        #expect(refusal(["--loops", "0"])
            == "invalid value '0' for --loops: expected a whole number from 1 to 256")
        #expect(refusal([], ["SSE_GATEWAY_LOOPS": "many"])?.contains("SSE_GATEWAY_LOOPS") == true)
    }

    /// `--max-connections auto` leaves the limit to be derived from the open-file limit, as by default.
    @Test func maxConnectionsAuto() throws {
        #expect(try configuration(["--max-connections", "auto"], ["SSE_GATEWAY_MAX_CONNECTIONS": "9"]).maxConnections == nil)
        #expect(try configuration([], ["SSE_GATEWAY_MAX_CONNECTIONS": "9"]).maxConnections == 9)
    }

    /// Each bad value is refused with a message naming the flag or variable and quoting the value.
    @Test(arguments: [
        (["--port", "70000"], [:], "invalid value '70000' for --port: expected a whole number from 0 to 65535"),
        (["--port", "-1"], [:],
         "invalid value '-1' for --port: expected a whole number from 0 to 65535 (it must not be negative)"),
        (["--port=abc"], [:], "invalid value 'abc' for --port: expected a whole number from 0 to 65535"),
        (["--port= 80"], [:], "invalid value ' 80' for --port: expected a whole number from 0 to 65535"),
        (["--port", "+80"], [:], "invalid value '+80' for --port: expected a whole number from 0 to 65535"),
        (["--retry-ms", "-5"], [:],
         "invalid value '-5' for --retry-ms: expected a whole number from 0 to 86400000 (it must not be negative)"),
        (["--heartbeat", "0"], [:], "invalid value '0' for --heartbeat: expected a duration above zero "
            + "such as 500ms, 15s, 2m, 1h or a number of seconds, up to 720h"),
        (["--heartbeat", "soon"], [:], "invalid value 'soon' for --heartbeat: expected a duration above zero "
            + "such as 500ms, 15s, 2m, 1h or a number of seconds, up to 720h"),
        (["--idle-timeout", "-1s"], [:], "invalid value '-1s' for --idle-timeout: expected a duration above zero "
            + "such as 500ms, 15s, 2m, 1h or a number of seconds, up to 720h (it must not be negative)"),
        (["--shutdown-grace", "1d"], [:], "invalid value '1d' for --shutdown-grace: expected a duration "
            + "such as 500ms, 15s, 2m, 1h or a number of seconds, up to 720h"),
        (["--drain-spread", "25h"], [:], "invalid value '25h' for --drain-spread: expected a duration such as 500ms, "
            + "15s, 2m, 1h or a number of seconds, up to 24h (it is sent as a retry: line, bounded as --retry-ms is)"),
        (["--drain-spread", "721h"], [:], "invalid value '721h' for --drain-spread: expected a duration such as 500ms, "
            + "15s, 2m, 1h or a number of seconds, up to 24h (it is sent as a retry: line, bounded as --retry-ms is)"),
        (["--drain-spread", "-2s"], [:], "invalid value '-2s' for --drain-spread: expected a duration such as 500ms, "
            + "15s, 2m, 1h or a number of seconds, up to 24h (it is sent as a retry: line, bounded as --retry-ms is) "
            + "(it must not be negative)"),
        (["--max-body", "0"], [:], "invalid value '0' for --max-body: expected a size above zero "
            + "such as 65536, 64k, 64KiB or 1MiB, up to 1GiB"),
        (["--max-header-bytes", "200"], [:], "invalid value '200' for --max-header-bytes: expected a size of at least "
            + "1KiB such as 16k, 64KiB or 1MiB, up to 1GiB (a browser's request head alone is 400 to 800 bytes)"),
        (["--max-uri", "64KB"], [:], "invalid value '64KB' for --max-uri: expected a size above zero "
            + "such as 65536, 64k, 64KiB or 1MiB, up to 1GiB"),
        (["--events-queue-limit", "0"], [:],
         "invalid value '0' for --events-queue-limit: expected a whole number from 1 to 1000000"),
        (["--replay-count", "x"], [:], "invalid value 'x' for --replay-count: expected a whole number from 0 to 1000000"),
        (["--max-connections", "0"], [:],
         "invalid value '0' for --max-connections: expected a whole number from 1 to 1000000"),
        (["--host="], [:], "invalid value '' for --host: expected non-empty visible ASCII without spaces"),
        (["--cors-origin", "a\nb"], [:],
         "invalid value 'a\\nb' for --cors-origin: expected non-empty visible ASCII without spaces"),
        (["--public", ""], [:], "invalid value '' for --public: expected non-empty text without control characters"),
        (["--tls-cert", "c\u{7}", "--tls-key", "k"], [:],
         "invalid value 'c\\u{07}' for --tls-cert: expected non-empty text without control characters"),
        (["--access-log=maybe"], [:], "invalid value 'maybe' for --access-log: expected true/false, 1/0 or yes/no"),
        ([], ["SSE_GATEWAY_PORT": "x"], "invalid value 'x' for SSE_GATEWAY_PORT: expected a whole number from 0 to 65535"),
        ([], ["SSE_GATEWAY_MAX_BODY": "-1"], "invalid value '-1' for SSE_GATEWAY_MAX_BODY: expected a size above zero "
            + "such as 65536, 64k, 64KiB or 1MiB, up to 1GiB (it must not be negative)"),
        ([], ["SSE_GATEWAY_ACCESS_LOG": ""],
         "invalid value '' for SSE_GATEWAY_ACCESS_LOG: expected true/false, 1/0 or yes/no"),
    ] as [([String], [String: String], String)])
    func badValueIsRefused(arguments: [String], environment: [String: String], message: String) {
        #expect(refusal(arguments, environment) == message)
    }

    /// A bad publish token is refused without repeating the secret.
    @Test func badTokenIsNotEchoed() throws {
        let message = try #require(refusal(["--publish-token", "my secret"]))
        #expect(message == "invalid value for --publish-token: expected non-empty visible ASCII without spaces")
        let fromEnvironment = try #require(refusal([], ["SSE_GATEWAY_PUBLISH_TOKEN": "my secret"]))
        #expect(fromEnvironment == "invalid value for SSE_GATEWAY_PUBLISH_TOKEN: "
            + "expected non-empty visible ASCII without spaces")
    }

    /// Unknown flags and stray arguments are refused by name.
    @Test func unknownArgumentsAreRefused() {
        #expect(refusal(["--prot", "80"]) == "unrecognized option '--prot'")
        #expect(refusal(["--prot=80"]) == "unrecognized option '--prot'")
        #expect(refusal(["-p"]) == "unrecognized option '-p'")
        #expect(refusal(["8080"]) == "unexpected argument '8080' (the gateway takes only options)")
        #expect(refusal(["--"]) == "unexpected argument '--' (the gateway takes only options)")
        #expect(refusal(["--version=2"]) == "option '--version' does not take a value")
    }

    /// A flag without its value is refused, also when the next argument is another flag.
    @Test func missingValueIsRefused() {
        #expect(refusal(["--port"]) == "option '--port' needs a value")
        #expect(refusal(["--host", "--port", "80"]) == "option '--host' needs a value")
    }

    /// `--help` and `-h` print the usage, `--version` the version, whatever follows them or is in the environment.
    @Test func helpAndVersion() throws {
        let help = CommandLineOutcome.help(GatewayConfiguration.usage)
        #expect(try GatewayConfiguration.parse(arguments: ["--help"], environment: [:]) == help)
        #expect(try GatewayConfiguration.parse(arguments: ["-h", "--bogus"], environment: [:]) == help)
        #expect(try GatewayConfiguration.parse(arguments: ["--port", "1", "--help"],
                                               environment: ["SSE_GATEWAY_PORT": "bad"]) == help)
        #expect(try GatewayConfiguration.parse(arguments: ["--version"], environment: [:])
            == .version("sse-gateway 0.1.0"))
    }

    /// `--help` lists every flag with its environment variable and its default, within 80 columns.
    @Test func helpMentionsEveryFlag() {
        let usage = GatewayConfiguration.usage
        for flag in Self.documentedFlags + ["--help", "-h", "--version"] {
            #expect(usage.contains(flag), "usage lacks \(flag)")
        }
        for option in GatewayOptions.all {
            let line = "[\(option.environmentVariable); default: \(option.defaultText(GatewayConfiguration()))]"
            #expect(usage.contains(line), "usage lacks \(line)")
        }
        #expect(usage.contains("[SSE_GATEWAY_PORT; default: 8080]"))
        #expect(usage.contains("[SSE_GATEWAY_HEARTBEAT; default: 15s]"))
        #expect(usage.contains("[SSE_GATEWAY_REPLAY_MAX_AGE; default: 5m]"))
        #expect(usage.contains("[SSE_GATEWAY_MAX_BODY; default: 64KiB]"))
        for line in usage.split(separator: "\n") {
            #expect(line.count <= 80, "too wide: \(line)")
        }
    }

    /// The TLS certificate and key are accepted together, from flags or the environment, and refused alone.
    @Test func tlsFlagsOnlyTogether() throws {
        let both = try configuration(["--tls-cert", "c.pem"], ["SSE_GATEWAY_TLS_KEY": "k.pem"])
        #expect(both.tlsCertificate == "c.pem" && both.tlsKey == "k.pem")
        let flags = try configuration(["--tls-cert=c.pem", "--tls-key=k.pem"])
        #expect(flags.tlsCertificate == "c.pem" && flags.tlsKey == "k.pem")
        #expect(refusal(["--tls-cert", "c.pem"]) == "--tls-cert (or SSE_GATEWAY_TLS_CERT) was given without "
            + "--tls-key (or SSE_GATEWAY_TLS_KEY); give both to serve HTTPS")
        #expect(refusal([], ["SSE_GATEWAY_TLS_KEY": "k.pem"]) == "--tls-key (or SSE_GATEWAY_TLS_KEY) was given "
            + "without --tls-cert (or SSE_GATEWAY_TLS_CERT); give both to serve HTTPS")
    }

    /// The HTTP parser's limits come from the three size options.
    @Test func httpLimitsFollowTheOptions() throws {
        let limits = try configuration(["--max-body=1k", "--max-header-bytes=2k", "--max-uri=3k"]).httpLimits
        #expect(limits.maxBodyBytes == 1024 && limits.maxHeaderBytes == 2048 && limits.maxURIBytes == 3072)
        #expect(GatewayConfiguration().httpLimits == HTTPLimits())
    }

    /// The text printed on a refused command line points to --help.
    @Test func diagnosticText() {
        #expect(ConfigurationError(message: "oops").diagnostic == "sse-gateway: oops\nTry 'sse-gateway --help'.")
    }
}
