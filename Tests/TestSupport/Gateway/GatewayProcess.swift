import Foundation
import HTTPCore

/// The `sse-gateway` executable that `swift test` builds beside the test
/// bundle (the test target depends on `SSEGateway`, so it is always built
/// first). Found from this process's own path, falling back to the default
/// build directory.
public let gatewayBinary: String = {
    var candidates: [String] = []
    if let testExecutable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
        candidates.append(URL(fileURLWithPath: testExecutable).deletingLastPathComponent().path + "/sse-gateway")
    }
    candidates.append(packageRoot + "/.build/debug/sse-gateway")
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[candidates.count - 1]
}()

/// A real `sse-gateway` process listening on an ephemeral port of 127.0.0.1,
/// with the port read from its start line on standard error, speaking plain
/// HTTP or HTTPS (the test certificate) as `transport` says; its client
/// helpers connect the same way.
public final class GatewayProcess: GatewayUnderTest {
    public let child: ChildProcess
    public let port: Int
    public let transport: Transport

    /// Starts the gateway with `--port 0 --public <package>/public` and
    /// `arguments`, and waits (up to 10 s) for its "listening on" line.
    /// - Parameter descriptorLimit: runs it under `ulimit -n` of this value (soft and hard).
    public static func start(_ arguments: [String] = [], environment: [String: String] = [:],
                      descriptorLimit: Int? = nil, portFlag: Bool = true,
                      over transport: Transport = .plain) async throws -> GatewayProcess {
        var gatewayArguments = (portFlag ? ["--port", "0"] : []) + ["--public", packageRoot + "/public"] + arguments
        if transport == .tls && !arguments.contains("--tls-cert") {  // the test certificate unless given others
            let certificates = TestCertificates.shared
            gatewayArguments += ["--tls-cert", certificates.serverChain, "--tls-key", certificates.serverKey]
        }
        let child: ChildProcess
        if let descriptorLimit {
            child = try ChildProcess("/bin/sh", ["-c", "ulimit -n \(descriptorLimit) && exec \"$0\" \"$@\"",
                                                 gatewayBinary] + gatewayArguments, environment: environment)
        } else {
            child = try ChildProcess(gatewayBinary, gatewayArguments, environment: environment)
        }
        let pattern = #/listening on 127\.0\.0\.1:(\d+)/#
        _ = await child.stderr.wait(upTo: 10) { $0.contains(pattern) }
        guard let match = child.stderr.text.firstMatch(of: pattern), let port = Int(match.1) else {
            await child.stop()
            throw HarnessFailure("no start line from sse-gateway; stderr: \(child.stderr.text)")
        }
        return GatewayProcess(child: child, port: port, transport: transport)
    }

    private init(child: ChildProcess, port: Int, transport: Transport) {
        self.child = child
        self.port = port
        self.transport = transport
    }

    /// The base URL and the curl options that reach this gateway (for HTTPS:
    /// `https://localhost:<port>` resolved to 127.0.0.1, trusting the test CA).
    public var curlBase: (url: String, options: [String]) {
        switch transport {
        case .plain:
            return ("http://127.0.0.1:\(port)", [])
        case .tls:
            return ("https://localhost:\(port)", ["--cacert", TestCertificates.shared.caCertificate,
                                                   "--resolve", "localhost:\(port):127.0.0.1"])
        }
    }
}

/// Runs `body` against a fresh gateway process and kills the process afterwards
/// (whether `body` returned, threw, or already stopped it).
public func withGatewayProcess(_ arguments: [String] = [], environment: [String: String] = [:],
                        descriptorLimit: Int? = nil, over transport: Transport = .plain,
                        _ body: (GatewayProcess) async throws -> Void) async throws {
    let gateway = try await GatewayProcess.start(arguments, environment: environment,
                                                 descriptorLimit: descriptorLimit, over: transport)
    do {
        try await body(gateway)
    } catch {
        await gateway.child.stop()
        // The gateway's own account usually explains a failure.
        throw HarnessFailure("\(error)\n--- sse-gateway stderr ---\n\(gateway.child.stderr.text)")
    }
    await gateway.child.stop()
}
