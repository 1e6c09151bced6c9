import HTTPCore
import Synchronization
import Testing
import TestSupport

/// How long a test waits on the server before calling it a failure. Generous: every
/// suite of the package runs at once in one process, on two pool threads of a loaded
/// 2-core machine, and the first requests can wait seconds behind the start-up burst.
let patience: Duration = .seconds(10)

/// Runs a server on an ephemeral port of 127.0.0.1 for the duration of `body`,
/// then shuts it down, cancels what is left and waits for `run()` to return.
/// Over `.tls` it serves HTTPS with the test certificate.
func withServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    over transport: Transport = .plain,
    handler: @escaping HTTPHandler,
    _ body: (HTTPServer) async throws -> Void
) async throws {
    let (server, running) = try startServer(configure, over: transport, handler: handler)
    do {
        try await body(server)
    } catch {
        server.shutdown()
        running.cancel()
        await running.value
        throw error
    }
    server.shutdown()
    running.cancel()
    await running.value
}

/// A server on an ephemeral port of 127.0.0.1, running, for a test that ends it itself
/// (shutdown, cancellation); over `.tls` it serves HTTPS with the test certificate.
func startServer(
    _ configure: (inout HTTPServerConfiguration) -> Void = { _ in },
    over transport: Transport = .plain,
    handler: @escaping HTTPHandler
) throws -> (HTTPServer, Task<Void, Never>) {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    configure(&configuration)
    let server = try HTTPServer(configuration: configuration, tls: try transport.serverContext(), handler: handler)
    return (server, Task { await server.run() })
}

extension HTTPServer {
    /// A client connection speaking what this server speaks (HTTPS with the
    /// test CA when it has a TLS context).
    func connect() async throws -> HTTPClient {
        try await HTTPClient.connect(port: port, deadline: .now + patience,
                                     tls: tls == nil ? nil : TestCertificates.shared.client)
    }

    /// A client that made one request and got its answer: a keep-alive connection now
    /// waiting for its next request.
    func idleClient() async throws -> HTTPClient {
        let client = try await connect()
        try await client.request("GET", "/x")
        _ = try await client.response(deadline: .now + patience)
        return client
    }
}

/// Answers `<method> <target> <body>` so tests can see what the server parsed.
let echoHandler: HTTPHandler = { request in
    let text = "\(request.head.method) \(request.head.target) \(String(decoding: request.body, as: UTF8.self))"
    return HTTPResponse(status: .ok, headers: ["Content-Type": "text/plain"], body: Array(text.utf8))
}

/// Fails the test (by throwing) if `operation` takes longer than `seconds`.
func within<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
        group.addTask { try await operation() }
        group.addTask {
            // The bound itself, not a wait: it loses the race unless `operation` hangs.
            try await Task.sleep(for: .milliseconds(Int(seconds * 1000)))
            return nil
        }
        guard let first = try await group.next(), let value = first else {
            group.cancelAll()
            throw TimedOut(seconds: seconds)
        }
        group.cancelAll()
        return value
    }
}

struct TimedOut: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "did not finish within \(seconds) s" }
}

/// Reads until the peer closes; returns everything read.
func readUntilClosed(_ client: HTTPClient, deadline: ContinuousClock.Instant) async throws -> [UInt8] {
    var all: [UInt8] = []
    while true {
        let bytes = try await client.connection.read(maxBytes: 65536, deadline: deadline)
        if bytes.isEmpty { return all }
        all.append(contentsOf: bytes)
    }
}

/// A one-shot signal tests can fire from any thread and await.
final class Signal: Sendable {
    private let stream: AsyncStream<Void>
    private let continuation: AsyncStream<Void>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    func fire() { continuation.yield() }

    /// Waits for the signal; false if it did not come in time.
    func wait(seconds: Double) async -> Bool {
        let stream = stream
        return (try? await within(seconds) {
            var iterator = stream.makeAsyncIterator()
            return await iterator.next() != nil
        }) ?? false
    }
}
