import Dispatch
import GatewayAPI
import Glibc
import HTTPCore
import StreamCluster
import StreamHub

/// The running gateway: one engine, one HTTP server, its maintenance (heartbeats
/// and topic sweeping at their deadlines, `Maintenance`), and the signal handling
/// that shuts it all down cleanly.
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
    /// Every open stream and whether `/readyz` says ready: what a stop drains.
    let drain = StreamDrain()
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
            var cluster = ClusterConfiguration(redis: redis, hub: hubConfiguration)
            cluster.log = { Log.info($0) }
            cluster.minReplicas = configuration.redisMinReplicas
            if loops.count == 1 {
                engine = ClusterEngine(configuration: cluster, executor: loops[0].actorExecutor)
            } else {
                // A cluster engine on each loop, with its own links, name and mirror of a
                // shard of the topics: a topic's pub/sub, fences, syncs and fan-out run there.
                let counters = HubCounters()
                let ids = SubscriberIDs()
                engine = ShardedEngine(shards: loops.enumerated().map { index, loop in
                    var own = cluster
                    own.gatewayID = ClusterConfiguration.randomGatewayID()
                    own.log = { Log.info("loop \(index): \($0)") }
                    return ClusterEngine(configuration: own, executor: loop.actorExecutor, counters: counters, subscriberIDs: ids)
                })
            }
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
        serverConfiguration.maxConnectionsPerAddress = configuration.maxConnectionsPerIP
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
                                        delivery: delivery, drain: drain),
            publish: PublishHandler(engine: engine, access: access, policy: policy),
            metrics: MetricsHandler(engine: engine, counters: counters, authFailures: access.failures,
                                    delivery: delivery, descriptorLimit: limit, drain: drain),
            files: configuration.publicDirectory.map { StaticFiles(root: $0) }
                ?? StaticFiles(embedded: .page))
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
        // One watcher for every signal: they share one pipe. SIGHUP reloads the
        // TLS files; without TLS it is logged and ignored (`systemctl reload`
        // must never stop the service).
        let watched = [SIGTERM, SIGINT, SIGHUP]
        let signals = handlingSignals ? SignalWatcher(signals: watched) { [self] name in
            if name == "SIGHUP" {
                reloadCertificate()
            } else {
                stopContinuation.yield(name)
            }
        } : nil
        defer { signals?.cancel() }
        Log.info("listening on \(configuration.host):\(server.port), serving \(configuration.publicDirectory ?? "the built-in page"); "
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
            group.addTask {
                await Maintenance(engine: self.engine, heartbeatInterval: self.configuration.heartbeatInterval,
                                  clock: ContinuousClock()).run()
            }
            group.addTask {
                var requests = self.stopRequests.makeAsyncIterator()
                guard let reason = await requests.next() else { return }
                await self.drainStreams(reason: reason)
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

    /// The drain before the shutdown proper (`DrainSchedule`): not ready at once,
    /// streams go on for `--drain-delay` (a second stop request cuts it short), then
    /// each is sent a `retry:` drawn over `--drain-spread` and ended.
    private func drainStreams(reason: String) async {
        var schedule = DrainSchedule(delay: configuration.drainDelay, spread: configuration.drainSpread)
        var action = schedule.handle(.stopRequested)
        while true {
            switch action {
            case .none:
                return
            case .notReady(let wait):
                drain.markNotReady()
                server.goAwayHTTP2()
                Log.info("draining (\(reason)): /readyz answers 503; streams go on for \(OptionValue.format(wait))")
                // The delay, or a second stop request, whichever comes first.
                let second = await withTaskGroup(of: Bool.self) { group in
                    group.addTask { (try? await Task.sleep(for: wait)) == nil }
                    group.addTask {
                        // The stop task's own iterator waits meanwhile: one consumer at a time.
                        var requests = self.stopRequests.makeAsyncIterator()
                        return await requests.next() != nil
                    }
                    let first = await group.next() ?? false
                    group.cancelAll()
                    return first
                }
                action = schedule.handle(second ? .stopRequested : .delayElapsed)
            case .endStreams:
                // HTTP/2 connections hear GOAWAY before their streams end (those opened
                // during the delay too).
                server.goAwayHTTP2()
                let spread = schedule
                let count = drain.endAll {
                    var random = SystemRandomNumberGenerator()
                    return spread.retryMilliseconds(using: &random)
                }
                Log.info("draining: \(count) stream\(count == 1 ? "" : "s") sent a retry: spread over "
                    + "\(OptionValue.format(configuration.drainSpread)) and ended")
                return
            }
        }
    }

    /// Loads the TLS certificate and key again (`SIGHUP`): new connections get
    /// the new ones, open streams keep theirs. A failure is logged and the
    /// previous certificate stays in use.
    func reloadCertificate() {
        guard let tls = server.tls else {
            Log.info("SIGHUP: no TLS certificate to reload (serving plain HTTP); still running")
            return
        }
        do {
            let context = try tls.reload()
            Log.info("reloaded the TLS certificate: now serving \(context.certificate.map(\.description) ?? "?")")
            TLSSetup.warnIfExpired(context, path: tls.certificateChainFile)
        } catch {
            Log.error("TLS reload failed, still serving the previous certificate: \(error)")
        }
    }

    /// Connections to hold when not configured: the descriptor limit less a
    /// reserve for listeners, files and the runtime.
    static func defaultMaxConnections(_ descriptorLimit: UInt64) -> Int {
        max(16, Int(min(descriptorLimit, 1_000_000)) - 64)
    }
}
