import Foundation
import HTTPCore
import TestSupport

/// The `sse-gateway` executable that `swift test` builds beside the test
/// bundle (the test target depends on `SSEGateway`, so it is always built
/// first). Found from this process's own path, falling back to the default
/// build directory.
let gatewayBinary: String = {
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
final class GatewayProcess: Sendable {
    let child: ChildProcess
    let port: Int
    let transport: Transport

    /// Starts the gateway with `--port 0 --public <package>/public` and
    /// `arguments`, and waits (up to 10 s) for its "listening on" line.
    /// - Parameter descriptorLimit: runs it under `ulimit -n` of this value (soft and hard).
    static func start(_ arguments: [String] = [], environment: [String: String] = [:],
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

    /// A fresh client connection over the gateway's transport.
    func connect(deadline: ContinuousClock.Instant = .now + .seconds(10)) async throws -> HTTPClient {
        try await HTTPClient.connect(port: port, deadline: deadline, tls: transport.client)
    }

    /// Opens an SSE stream over the gateway's transport.
    func openStream(_ target: String, headWithin seconds: Double = 10) async throws
        -> (stream: RawSSEStream, head: HTTPResponseParser.Head?) {
        try await RawSSEStream.open(port: port, target: target, headWithin: seconds, tls: transport.client)
    }

    /// The base URL and the curl options that reach this gateway (for HTTPS:
    /// `https://localhost:<port>` resolved to 127.0.0.1, trusting the test CA).
    var curlBase: (url: String, options: [String]) {
        switch transport {
        case .plain:
            return ("http://127.0.0.1:\(port)", [])
        case .tls:
            return ("https://localhost:\(port)", ["--cacert", TestCertificates.shared.caCertificate,
                                                   "--resolve", "localhost:\(port):127.0.0.1"])
        }
    }

    /// One request on a fresh connection.
    func send(_ method: String, _ target: String, body: [UInt8]? = nil,
              within seconds: Double = 10) async throws -> HTTPClient.Response {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let client = try await connect(deadline: deadline)
        defer { client.close() }
        try await client.request(method, target, body: body)
        return try await client.response(deadline: deadline)
    }

    /// Publishes `value` on a fresh connection and returns the decoded JSON reply.
    func publish(_ target: String, _ value: String) async throws -> PublishReply {
        let response = try await send("POST", target, body: Array(value.utf8))
        guard response.status == 200 else {
            throw HarnessFailure("publish to \(target) answered \(response.status): \(response.text)")
        }
        return try JSONDecoder().decode(PublishReply.self, from: Data(response.body))
    }

    /// `/metrics` on a fresh connection, as a map from `name{labels}` to value.
    func metrics() async throws -> [String: Double] {
        parseMetrics(try await send("GET", "/metrics").text)
    }

    /// Polls `/metrics` until `metric` equals `value` or `seconds` pass; returns the last value seen.
    func waitForMetric(_ metric: String, toBe value: Double, upTo seconds: Double) async throws -> Double? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var last: Double?
        repeat {
            last = try await metrics()[metric]
            if last == value { return last }
            try await Task.sleep(for: .milliseconds(25))
        } while ContinuousClock.now < deadline
        return last
    }
}

/// The JSON a successful publish answers with.
struct PublishReply: Decodable, Equatable {
    let id: String
    let subscribers: Int
}

/// Prometheus text as a map from `name{labels}` to value.
func parseMetrics(_ text: String) -> [String: Double] {
    var values: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        let parts = line.split(separator: " ")
        if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
    }
    return values
}

/// Runs `body` against a fresh gateway process and kills the process afterwards
/// (whether `body` returned, threw, or already stopped it).
func withGatewayProcess(_ arguments: [String] = [], environment: [String: String] = [:],
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

/// A harness step that could not do its part (no start line, a stream cut short…).
struct HarnessFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
