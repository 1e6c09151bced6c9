import GatewayAPI
import HTTPCore
import RedisClient

/// Everything the gateway can be told at start, already validated.
///
/// A value of this type promises that every field is within the range the
/// command line accepts (see `GatewayOptions`), that `tlsCertificate` and
/// `tlsKey` are either both set or both nil, and that at most one JWT key is
/// set, and one is when `subscribeAuth` is `.token` or `jwtAudience` is set.
/// `GatewayConfiguration()` holds the
/// documented defaults; `--help` prints them from this same value, so the two
/// cannot drift apart.
struct GatewayConfiguration: Sendable, Equatable {
    /// Address to listen on.
    var host = "127.0.0.1"
    /// TCP port to listen on; 0 asks the kernel for an ephemeral port.
    var port = 8080
    /// Directory served for `GET /` and `GET /<file>`; nil serves the page built
    /// into the executable (from `public/` at build time).
    var publicDirectory: String? = nil
    /// Value of the `retry:` line that opens every stream (0 or more).
    var retryMilliseconds = 2000
    /// Silence after which a stream gets a `: hb` comment (more than zero).
    var heartbeatInterval: Duration = .seconds(15)
    /// Pending events an `/events` subscriber may hold before it is disconnected.
    var eventsQueueLimit = 1024
    /// Events each topic keeps for `Last-Event-ID` resumption (0 disables resuming).
    var replayCount = 256
    /// Oldest event age kept in a replay window (more than zero).
    var replayMaxAge: Duration = .seconds(300)
    /// Largest accepted publish body, in bytes (`413` past it).
    var maxBodyBytes = 65536
    /// Largest accepted request line plus headers, in bytes (`431` past it).
    var maxHeaderBytes = 16384
    /// Largest accepted request target, in bytes (`414` past it).
    var maxURIBytes = 8192
    /// Open connections allowed at once; nil means "derive from the open-file
    /// limit at start" (the listener decides, this type only carries the choice).
    var maxConnections: Int? = nil
    /// Connections allowed at once from one client address; nil: no such cap (the default).
    var maxConnectionsPerIP: Int? = nil
    /// Event-loop threads (each with its connections and a shard of the topics);
    /// nil means "as many as the cores the process may run on" (its CPU affinity).
    var loops: Int? = nil
    /// Time a new connection has to send a complete request head.
    var headerTimeout: Duration = .seconds(10)
    /// Time an idle keep-alive connection is kept open.
    var idleTimeout: Duration = .seconds(60)
    /// Time a request body may take to arrive once its head is in.
    var bodyTimeout: Duration = .seconds(10)
    /// Bearer token required on every POST; nil leaves publishing open. With
    /// a JWT key, it is accepted beside tokens.
    var publishToken: String? = nil
    /// Secret for HS256 tokens (`--jwt-secret`, at least 32 bytes); at most
    /// one of it and `jwtPublicKey`.
    var jwtSecret: String? = nil
    /// Path of the PEM public key for RS256 or ES256 tokens (`--jwt-public-key`).
    var jwtPublicKey: String? = nil
    /// The audience a token's `aud` must contain; nil leaves `aud` unchecked.
    /// Set only with a key.
    var jwtAudience: String? = nil
    /// Whether subscribing needs a token; `.token` only with a key.
    var subscribeAuth: SubscribeAuth = .open
    /// Value of `Access-Control-Allow-Origin`.
    var corsOrigin = "*"
    /// Time streams get to end cleanly on SIGTERM/SIGINT before being cut.
    var shutdownGrace: Duration = .seconds(2)
    /// On a stop, how long streams go on after `/readyz` turned `503` (0 or more).
    var drainDelay: Duration = .zero
    /// On a stop, each stream's last `retry:` is drawn from 0 to this (0 or more).
    var drainSpread: Duration = .seconds(5)
    /// Whether each request is logged to standard output.
    var accessLog = false
    /// The cluster's Redis (one server, or a master found through Sentinel); nil keeps
    /// every topic in this process (the default).
    var redis: RedisEndpoint? = nil
    /// Replicas that must hold a publish before it is acknowledged (`WAIT`); 0: the master alone.
    var redisMinReplicas = 0
    /// Path of the PEM certificate (chain); set together with `tlsKey`.
    var tlsCertificate: String? = nil
    /// Path of the PEM private key; set together with `tlsCertificate`.
    var tlsKey: String? = nil
    /// HTTP/2 beside HTTP/1.1 on the listener (ALPN `h2`, cleartext prior knowledge).
    var http2 = true
    /// `SETTINGS_MAX_CONCURRENT_STREAMS`: streams one HTTP/2 connection may hold.
    var http2MaxConcurrentStreams = 128

    /// The HTTP parser's limits, taken from the three size options.
    var httpLimits: HTTPLimits {
        var limits = HTTPLimits()
        limits.maxBodyBytes = maxBodyBytes
        limits.maxHeaderBytes = maxHeaderBytes
        limits.maxURIBytes = maxURIBytes
        return limits
    }

    /// The gateway's name and version, as `--version` prints it.
    static let version = "sse-gateway 0.1.0"
}

/// What the command line asks for: run with a configuration, or print a text
/// and exit 0 (`--help`, `--version`). Errors are thrown, not returned.
enum CommandLineOutcome: Equatable, Sendable {
    /// Start the gateway with this configuration.
    case run(GatewayConfiguration)
    /// Print this usage text to standard output and exit 0.
    case help(String)
    /// Print this version line to standard output and exit 0.
    case version(String)
}

/// A command line or environment the gateway refuses to start with.
///
/// `message` is one line that names the flag or environment variable at fault
/// and, where there is one, the bad value. The caller prints `diagnostic` to
/// standard error and exits with status 2.
struct ConfigurationError: Error, Equatable, Sendable {
    let message: String

    /// The full text for standard error: the message and where to find help.
    var diagnostic: String {
        "sse-gateway: \(message)\nTry 'sse-gateway --help'."
    }
}
