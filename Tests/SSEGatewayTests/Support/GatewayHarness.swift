import Foundation
import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// A gateway running inside the test process on an ephemeral port of
/// 127.0.0.1, speaking plain HTTP or HTTPS as `transport` says. Its client
/// helpers are `GatewayUnderTest`'s (TestSupport), shared with `GatewayProcess`.
final class RunningGateway: GatewayUnderTest {
    let gateway: Gateway
    let transport: Transport
    private let task: Task<Void, Never>

    var port: Int { gateway.port }

    /// Starts a gateway; over `.tls` with the test certificate chain and key
    /// (set before `configure`, which may replace them).
    init(over transport: Transport = .plain, _ configure: (inout GatewayConfiguration) -> Void = { _ in }) throws {
        self.transport = transport
        var configuration = GatewayConfiguration()
        configuration.port = 0
        configuration.publicDirectory = packageRoot + "/public"
        if transport == .tls {
            configuration.tlsCertificate = TestCertificates.shared.serverChain
            configuration.tlsKey = TestCertificates.shared.serverKey
        }
        configure(&configuration)
        let gateway = try Gateway(configuration: configuration)
        self.gateway = gateway
        task = Task { await gateway.run(handlingSignals: false) }
    }

    /// Shuts the gateway down and waits for it to finish.
    func stop() async {
        gateway.stop()
        await task.value
    }
}

/// Runs `body` against a fresh in-process gateway over `transport`, stopping it afterwards.
func withGateway(over transport: Transport = .plain, _ configure: (inout GatewayConfiguration) -> Void = { _ in },
                 _ body: (RunningGateway) async throws -> Void) async throws {
    let gateway = try RunningGateway(over: transport, configure)
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
        }) { try await body($0) }
    }
}
