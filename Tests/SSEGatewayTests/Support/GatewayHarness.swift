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
