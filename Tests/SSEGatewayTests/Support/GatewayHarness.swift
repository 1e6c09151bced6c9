import Foundation
import HTTPCore
import RedisClient
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// Where gateways under test keep their topics: in memory (the default), in a
/// cluster on a fresh redis-server of their own, or on a fresh Redis Cluster of their
/// own (3 masters, `redis+cluster://`). `SSE_TEST_BACKEND=redis` and
/// `SSE_TEST_BACKEND=redis-cluster` run the end-to-end suites again on them
/// (scripts/test.sh does), since every behaviour of API.md must hold in every mode.
enum Backend: String, Sendable {
    case memory, redis
    case redisCluster = "redis-cluster"

    static let selected = Backend(rawValue: ProcessInfo.processInfo.environment["SSE_TEST_BACKEND"] ?? "") ?? .memory
}

/// The event loops of gateways under test: `SSE_GATEWAY_LOOPS` when set (scripts/test.sh
/// runs the end-to-end suites with 1 and with 2; gateway processes the tests start read
/// it themselves), else the gateway's default.
let testLoops: Int? = ProcessInfo.processInfo.environment["SSE_GATEWAY_LOOPS"].flatMap { Int($0) }

/// A gateway running inside the test process on an ephemeral port of
/// 127.0.0.1, speaking plain HTTP or HTTPS as `transport` says. Its client
/// helpers are `GatewayUnderTest`'s (TestSupport), shared with `GatewayProcess`.
final class RunningGateway: GatewayUnderTest {
    let gateway: Gateway
    let transport: Transport
    /// The gateway's Redis, with the `.redis` backend or a shared one-server Redis (its own unless it was given one).
    let redis: RedisServer?
    private let ownsRedis: Bool
    /// The gateway's Redis Cluster, with the `.redisCluster` backend and no shared Redis
    /// (leased from `RedisClusterPool`, emptied, and given back when the gateway stopped).
    let cluster: RedisCluster?
    private let task: Task<Void, Never>

    var port: Int { gateway.port }

    /// Starts a gateway on `backend` (a Redis of its own for `.redis`, ready before
    /// this returns); over `.tls` with the test certificate chain and key (set
    /// before `configure`, which may replace them).
    /// - Parameter sharing: a Redis (one server or a Redis Cluster) other gateways use too:
    ///   one cluster of gateways, whatever `backend` says.
    static func start(over transport: Transport = .plain, backend: Backend = .selected, sharing: SharedRedis? = nil,
                      _ configure: (inout GatewayConfiguration) -> Void = { _ in }) async throws -> RunningGateway {
        let ownsRedis = sharing == nil && backend == .redis
        let redis = ownsRedis ? try await RedisServer.start() : sharing?.server
        let cluster = sharing == nil && backend == .redisCluster ? try await RedisClusterPool.shared.lease() : nil
        do {
            let running = try RunningGateway(over: transport, redis: redis, ownsRedis: ownsRedis, cluster: cluster,
                                             redisURL: sharing?.url ?? cluster?.url ?? redis?.url, configure)
            let deadline = ContinuousClock.now + .seconds(10)
            while !running.gateway.engine.isReady, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            return running
        } catch {
            if ownsRedis { await redis?.stop() }
            if let cluster { await RedisClusterPool.shared.giveBack(cluster) }
            throw error
        }
    }

    private init(over transport: Transport, redis: RedisServer?, ownsRedis: Bool, cluster: RedisCluster?,
                 redisURL: String?, _ configure: (inout GatewayConfiguration) -> Void) throws {
        self.transport = transport
        self.redis = redis
        self.ownsRedis = ownsRedis
        self.cluster = cluster
        var configuration = GatewayConfiguration()
        configuration.port = 0
        configuration.publicDirectory = packageRoot + "/public"
        if transport == .tls {
            configuration.tlsCertificate = TestCertificates.shared.serverChain
            configuration.tlsKey = TestCertificates.shared.serverKey
        }
        if let redisURL { configuration.redis = try RedisEndpoint(parsing: redisURL) }
        configuration.loops = testLoops
        configure(&configuration)
        let gateway = try Gateway(configuration: configuration)
        self.gateway = gateway
        task = Task { await gateway.run(handlingSignals: false) }
    }

    /// Shuts the gateway down and waits for it to finish.
    func stop() async {
        gateway.stop()
        await task.value
        if ownsRedis { await redis?.stop() }
        if let cluster { await RedisClusterPool.shared.giveBack(cluster) }
    }
}

/// Runs `body` against a fresh in-process gateway over `transport` on `backend`, stopping it afterwards.
func withGateway(over transport: Transport = .plain, backend: Backend = .selected,
                 _ configure: (inout GatewayConfiguration) -> Void = { _ in },
                 _ body: (RunningGateway) async throws -> Void) async throws {
    let gateway = try await RunningGateway.start(over: transport, backend: backend, configure)
    do {
        try await body(gateway)
    } catch {
        await gateway.stop()
        throw error
    }
    await gateway.stop()
}

/// Where a gateway under test runs: inside the test process (`RunningGateway`) or as
/// the real `sse-gateway` executable (`GatewayProcess`).
enum GatewayRun: String, CaseIterable, Sendable {
    case inProcess
    case childProcess
}

/// Runs `body` against a fresh gateway started with the command line `arguments`,
/// run as `run` says, over `transport` (the harness chooses the port, the public
/// directory and, over TLS, the test certificate). The one entry point for a test
/// that must hold for the gateway however it runs.
func withGateway(_ run: GatewayRun, over transport: Transport = .plain, arguments: [String] = [],
                 _ body: (any GatewayUnderTest) async throws -> Void) async throws {
    switch run {
    case .childProcess:
        try await withGatewayProcess(arguments, over: transport) { try await body($0) }
    case .inProcess:
        guard case .run(let parsed) = try GatewayConfiguration.parse(arguments: arguments, environment: [:]) else {
            throw HarnessFailure("\(arguments) does not start a gateway")
        }
        try await withGateway(over: transport, { configuration in
            let harness = configuration
            configuration = parsed
            configuration.port = harness.port
            configuration.publicDirectory = harness.publicDirectory
            configuration.tlsCertificate = harness.tlsCertificate
            configuration.tlsKey = harness.tlsKey
            configuration.redis = parsed.redis ?? harness.redis  // The backend's Redis, unless the arguments name one.
            configuration.loops = parsed.loops ?? harness.loops
        }) { try await body($0) }
    }
}
