import Dispatch
import GatewayAPI
import Glibc
import HTTPCore
import StreamCluster
import StreamHub

/// The running gateway: one hub, one HTTP server, a ticker for heartbeats and
/// topic sweeping, and the signal handling that shuts it all down cleanly.
///
/// With `--tls-cert`/`--tls-key` the same listener speaks HTTPS; `SIGHUP`
/// reloads the certificate and key (see `TLSSetup`).
///
/// Lifecycle: `init` loads the TLS files and binds (so a bad certificate or a
/// taken port fails before anything starts);
/// `run()` installs the signal handlers, then logs the start line (so once
/// that line is out, SIGTERM/SIGINT always mean a graceful stop), serves until
/// `SIGTERM`/`SIGINT` (or `stop()`), then stops accepting, finishes every
/// stream through the hub, waits up to half the grace period for connections
/// to end, cancels what remains, and returns.
final class Gateway: Sendable {
    let configuration: GatewayConfiguration
    let engine: any StreamEngine
    let server: HTTPServer
    /// The event loops serving connections (and, in memory, holding a shard of the topics each).
    let loops: [EventLoop]
    /// Delivery latency and frames per write: the subscribe handler records, `/metrics` shows.
    let delivery: DeliveryMetrics
    /// The open-descriptor limit in force, for the start line.
    private let descriptorLimit: UInt64
    private let stopRequests: AsyncStream<String>
    private let stopContinuation: AsyncStream<String>.Continuation

    /// - Throws: `ConfigurationError` for TLS files or a token key that cannot
    ///   be used (the caller exits 2, as for a bad flag); other errors when binding fails.
    init(configuration: GatewayConfiguration) throws {
        self.configuration = configuration
        let tls = try TLSSetup.load(configuration)
        let access = try TokenSetup.accessControl(configuration)
        var hubConfiguration = HubConfiguration()
        hubConfiguration.eventsQueueLimit = configuration.eventsQueueLimit
        hubConfiguration.replayCount = configuration.replayCount
        hubConfiguration.replayMaxAge = configuration.replayMaxAge
        // On the loops' threads, with the connections that publish and subscribe.
        let loops = EventLoop.loops(configuration.loops ?? EventLoop.availableCores)
        self.loops = loops
        let engine: any StreamEngine
        if let redis = configuration.redis {
            // One mirror hub, on the first loop; connections still use every loop.
            var cluster = ClusterConfiguration(redis: redis, hub: hubConfiguration)
            cluster.log = { Log.info($0) }
            engine = ClusterEngine(configuration: cluster, executor: loops[0].actorExecutor)
        } else if loops.count == 1 {
            engine = Hub(configuration: hubConfiguration, executor: loops[0].actorExecutor)
        } else {
            // A shard of the topics on each loop.
            engine = ShardedHub(configuration: hubConfiguration, executors: loops.map(\.actorExecutor))
        }
        self.engine = engine

        let limit = DescriptorLimit.raiseToHard()
        descriptorLimit = limit
        var serverConfiguration = HTTPServerConfiguration()
        serverConfiguration.host = configuration.host
        serverConfiguration.port = configuration.port
        serverConfiguration.limits = configuration.httpLimits
        serverConfiguration.headerTimeout = configuration.headerTimeout
        serverConfiguration.idleTimeout = configuration.idleTimeout
        serverConfiguration.bodyTimeout = configuration.bodyTimeout
        serverConfiguration.maxConnections = configuration.maxConnections ?? Gateway.defaultMaxConnections(limit)
        serverConfiguration.http2.enabled = configuration.http2
        serverConfiguration.http2.maxConcurrentStreams = configuration.http2MaxConcurrentStreams
        // One policy for every answer: the handlers' replies and the HTTP layer's own refusals.
        let policy = ResponsePolicy(corsOrigin: configuration.corsOrigin)
        serverConfiguration.refusal = { status, reason in policy.refusal(status, reason) }

        let counters = ConnectionCounters()
        let delivery = DeliveryMetrics()
        self.delivery = delivery
        let router = Router(
            subscribe: SubscribeHandler(engine: engine, access: access, retryMilliseconds: configuration.retryMilliseconds,
                                        delivery: delivery),
            publish: PublishHandler(engine: engine, access: access),
            metrics: MetricsHandler(engine: engine, counters: counters, authFailures: access.failures,
                                    delivery: delivery, descriptorLimit: limit),
            files: StaticFiles(root: configuration.publicDirectory))
        let accessLog = configuration.accessLog
        server = try HTTPServer(configuration: serverConfiguration, loops: loops, counters: counters, tls: tls,
                                onAcceptError: { error in Log.error("accept: \(error); backing off") },
                                handler: { request in
                                    let response = policy.finish(await router.respond(to: request))
                                    if accessLog {
                                        // Tokens never reach the log: `access_token=…`.
                                        Log.info("\(request.head.method) \(RequestToken.redacted(request.head.target)) "
                                            + "\(response.head.status.code)")
                                    }
                                    return response
                                })
        (stopRequests, stopContinuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// The bound port.
    var port: Int { server.port }

    /// Asks `run()` to shut down (as a signal would).
    func stop(reason: String = "stop requested") {
        stopContinuation.yield(reason)
    }

    /// Serves until stopped, then shuts down gracefully (see the type's doc).
    /// - Parameter handlingSignals: false in tests that run a gateway inside the test process.
    func run(handlingSignals: Bool = true) async {
        // One watcher for every signal: they share one pipe. SIGHUP is only
        // taken over with TLS (otherwise it keeps its default effect).
        let watched = server.tls == nil ? [SIGTERM, SIGINT] : [SIGTERM, SIGINT, SIGHUP]
        let signals = handlingSignals ? SignalWatcher(signals: watched) { [self] name in
            if name == "SIGHUP" {
                reloadCertificate()
            } else {
                stopContinuation.yield(name)
            }
        } : nil
        defer { signals?.cancel() }
        Log.info("listening on \(configuration.host):\(server.port), serving \(configuration.publicDirectory); "
            + "max connections \(server.configuration.maxConnections), open-file limit \(descriptorLimit), "
            + "\(loops.count) event loop\(loops.count == 1 ? "" : "s")")
        if let certificate = server.tls?.context.certificate {
            Log.info("HTTPS on the same port, certificate \(certificate)")
        }
        let grace = configuration.shutdownGrace
        // The engine's own work (the cluster's Redis link) runs until the engine shuts down.
        async let engineWork: Void = engine.run()
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.server.run() }
            group.addTask { await self.tick() }
            group.addTask {
                var requests = self.stopRequests.makeAsyncIterator()
                guard let reason = await requests.next() else { return }
                Log.info("stopping (\(reason)): no new connections, ending every stream")
                self.server.shutdown()
                await self.engine.shutdown()
                // Past half the grace period, whatever is still open (a client that
                // does not read cannot take its terminator) is cancelled: the other
                // half is for cancelling and closing. With a quarter left, 2,000
                // streams and 40 stalled ones on a loaded machine took 2.0 s to exit.
                try? await Task.sleep(for: grace * 0.5)
            }
            // Either the server ended (all connections closed) or the grace ran out.
            await group.next()
            group.cancelAll()
        }
        await engine.shutdown()
        await engineWork
        Log.info("stopped")
    }

    /// Loads the TLS certificate and key again (`SIGHUP`): new connections get
    /// the new ones, open streams keep theirs. A failure is logged and the
    /// previous certificate stays in use.
    func reloadCertificate() {
        guard let tls = server.tls else { return }
        do {
            let context = try tls.reload()
            Log.info("reloaded the TLS certificate: now serving \(context.certificate.map(\.description) ?? "?")")
            TLSSetup.warnIfExpired(context, path: tls.certificateChainFile)
        } catch {
            Log.error("TLS reload failed, still serving the previous certificate: \(error)")
        }
    }

    /// Heartbeats for idle subscribers, and forgetting empty topics, once a second.
    private func tick() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: .seconds(1))
            await engine.sendHeartbeats(idleFor: configuration.heartbeatInterval)
            await engine.sweep()
        }
    }

    /// Connections to hold when not configured: the descriptor limit less a
    /// reserve for listeners, files and the runtime.
    static func defaultMaxConnections(_ descriptorLimit: UInt64) -> Int {
        max(16, Int(min(descriptorLimit, 1_000_000)) - 64)
    }
}

/// Delivers POSIX signals as calls on a dispatch queue, never in a signal handler.
/// Owned by `Gateway.run()` and used only there.
///
/// The handlers are installed synchronously (`SignalPipe`) and only write the
/// signal's number to a pipe; a dispatch read source turns bytes into calls. So
/// from the moment `init` returns no signal is lost or fatal, even one that
/// arrives before the read source is registered (the byte waits in the pipe).
/// Dispatch signal sources were not: they set up their handler asynchronously,
/// and `SIG_IGN` in the meantime dropped the signal.
final class SignalWatcher {
    private let source: any DispatchSourceRead

    init(signals: [Int32], handler: @escaping @Sendable (String) -> Void) {
        let queue = DispatchQueue(label: "sse-gateway.signals")
        source = DispatchSource.makeReadSource(fileDescriptor: SignalPipe.readDescriptor, queue: queue)
        source.setEventHandler {
            for number in SignalPipe.drain() { handler(SignalWatcher.name(of: number)) }
        }
        source.resume()
        SignalPipe.install(signals)
    }

    /// Stops delivering calls. The handlers stay installed (a late signal is
    /// then a no-op byte in the pipe), so a signal during the last steps of a
    /// shutdown cannot kill the process with a non-zero status.
    func cancel() {
        source.cancel()
    }

    private static func name(of number: Int32) -> String {
        switch number {
        case SIGTERM: return "SIGTERM"
        case SIGINT: return "SIGINT"
        case SIGHUP: return "SIGHUP"
        default: return "signal \(number)"
        }
    }
}
