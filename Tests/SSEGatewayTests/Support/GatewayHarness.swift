import Foundation
import HTTPCore
import RedisClient
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// The package's root directory (where `public/` lives), found from this file's path.
let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}()

/// Where gateways under test keep their topics: in memory (the default), or in a
/// cluster on a fresh redis-server of their own. `SSE_TEST_BACKEND=redis` runs the
/// end-to-end suites again on Redis (scripts/test.sh does), since every behaviour
/// of API.md must hold in both modes.
enum Backend: String, Sendable {
    case memory, redis

    static let selected = Backend(rawValue: ProcessInfo.processInfo.environment["SSE_TEST_BACKEND"] ?? "") ?? .memory
}

/// A gateway running inside the test process on an ephemeral port of
/// 127.0.0.1, speaking plain HTTP or HTTPS as `transport` says. Every client
/// helper here connects over that transport, so a test written against them
/// runs over both by taking a `Transport` argument.
final class RunningGateway: Sendable {
    let gateway: Gateway
    let transport: Transport
    /// The gateway's Redis, with the `.redis` backend (its own unless it was given one).
    let redis: RedisServer?
    private let ownsRedis: Bool
    private let task: Task<Void, Never>

    var port: Int { gateway.port }

    /// Starts a gateway on `backend` (a Redis of its own for `.redis`, ready before
    /// this returns); over `.tls` with the test certificate chain and key (set
    /// before `configure`, which may replace them).
    /// - Parameter sharing: a Redis other gateways use too (one cluster); the backend is then `.redis`.
    static func start(over transport: Transport = .plain, backend: Backend = .selected, sharing: RedisServer? = nil,
                      _ configure: (inout GatewayConfiguration) -> Void = { _ in }) async throws -> RunningGateway {
        let ownsRedis = sharing == nil && backend == .redis
        let redis = ownsRedis ? try await RedisServer.start() : sharing
        do {
            let running = try RunningGateway(over: transport, redis: redis, ownsRedis: ownsRedis, configure)
            let deadline = ContinuousClock.now + .seconds(10)
            while !running.gateway.engine.isReady, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(10))
            }
            return running
        } catch {
            if ownsRedis { await redis?.stop() }
            throw error
        }
    }

    private init(over transport: Transport, redis: RedisServer?, ownsRedis: Bool,
                 _ configure: (inout GatewayConfiguration) -> Void) throws {
        self.transport = transport
        self.redis = redis
        self.ownsRedis = ownsRedis
        var configuration = GatewayConfiguration()
        configuration.port = 0
        configuration.publicDirectory = packageRoot + "/public"
        if transport == .tls {
            configuration.tlsCertificate = TestCertificates.shared.serverChain
            configuration.tlsKey = TestCertificates.shared.serverKey
        }
        if let redis { configuration.redis = try RedisURL(parsing: redis.url) }
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
    }

    /// One request on a fresh connection.
    func send(_ method: String, _ target: String, headers: [(String, String)] = [],
              body: [UInt8]? = nil) async throws -> HTTPClient.Response {
        let client = try await connect()
        defer { client.close() }
        try await client.request(method, target, headers: headers, body: body)
        return try await client.response(deadline: .now + .seconds(10), requestWasHead: method == "HEAD")
    }

    func post(_ target: String, _ value: String, headers: [(String, String)] = []) async throws -> HTTPClient.Response {
        try await send("POST", target, headers: headers, body: Array(value.utf8))
    }

    /// The id a successful publish answered with.
    func publish(_ target: String, _ value: String, headers: [(String, String)] = []) async throws -> UInt64 {
        let response = try await post(target, value, headers: headers)
        #expect(response.status == 200, "publish to \(target) answered \(response.status): \(response.text)")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        return UInt64(object?["id"] as? String ?? "") ?? 0
    }

    /// Opens an SSE stream and reads its response head.
    func subscribe(_ target: String, headers: [(String, String)] = []) async throws -> SSEStream {
        try await SSEStream.open(client: try await connect(), target: target, headers: headers)
    }

    /// `/metrics` as a map from `name{labels}` to value.
    func metrics() async throws -> [String: Double] {
        let response = try await send("GET", "/metrics")
        var values: [String: Double] = [:]
        for line in response.text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            if parts.count == 2, let value = Double(parts[1]) { values[String(parts[0])] = value }
        }
        return values
    }

    /// Polls `/metrics` until `metric` equals `value` or `seconds` pass; returns the last value seen.
    func waitForMetric(_ metric: String, toBe value: Double, within seconds: Double) async throws -> Double? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var last: Double?
        repeat {
            last = try await metrics()[metric]
            if last == value { return last }
            try await Task.sleep(for: .milliseconds(20))
        } while ContinuousClock.now < deadline
        return last
    }
}

/// Runs `body` against a fresh in-process gateway over `transport`, stopping it afterwards.
func withGateway(over transport: Transport = .plain, _ configure: (inout GatewayConfiguration) -> Void = { _ in },
                 _ body: (RunningGateway) async throws -> Void) async throws {
    let gateway = try await RunningGateway.start(over: transport, configure)
    do {
        try await body(gateway)
    } catch {
        await gateway.stop()
        throw error
    }
    await gateway.stop()
}

/// A client-side SSE subscription: the HTTP response head, then events
/// decoded with the shared SSE parser. Used from one task.
final class SSEStream {
    let client: HTTPClient
    let head: HTTPResponseParser.Head
    private var parser = SSEParser()
    private var pending: [SSEEvent] = []
    private(set) var ended = false

    private init(client: HTTPClient, head: HTTPResponseParser.Head) {
        self.client = client
        self.head = head
    }

    /// Opens a plain-HTTP stream to 127.0.0.1:`port` (tests that do not take a `Transport`).
    static func open(port: Int, target: String, headers: [(String, String)] = []) async throws -> SSEStream {
        try await open(client: try await HTTPClient.connect(port: port), target: target, headers: headers)
    }

    /// Sends `GET target` on `client` and reads the response head.
    static func open(client: HTTPClient, target: String, headers: [(String, String)] = []) async throws -> SSEStream {
        try await client.request("GET", target, headers: [("Accept", "text/event-stream")] + headers)
        guard case .head(let head)? = try await client.nextEvent(deadline: .now + .seconds(10)) else {
            throw HTTPResponseParser.Failure(reason: "no response head for \(target)")
        }
        return SSEStream(client: client, head: head)
    }

    /// The `retry:` value the stream announced, once read.
    var retry: Int? { parser.retry }

    /// How many comment lines (heartbeats) were seen.
    var comments: Int { parser.comments }

    /// The next event, or nil when the stream ended (or `seconds` passed: `TimedOut`).
    func next(within seconds: Double = 5) async throws -> SSEEvent? {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while pending.isEmpty {
            if ended { return nil }
            let event: HTTPResponseParser.Event?
            do {
                event = try await client.nextEvent(deadline: deadline)
            } catch IOWaitError.timedOut {
                throw StreamTimedOut(seconds: seconds)
            } catch {
                ended = true
                return nil
            }
            switch event {
            case .body(let bytes): pending.append(contentsOf: try parser.feed(bytes))
            case .head, .end, nil: ended = true
            }
        }
        return pending.removeFirst()
    }

    /// Reads `count` events.
    func next(_ count: Int, within seconds: Double = 5) async throws -> [SSEEvent] {
        var events: [SSEEvent] = []
        while events.count < count, let event = try await next(within: seconds) { events.append(event) }
        return events
    }

    /// True if no event arrives within `seconds`.
    func staysQuiet(for seconds: Double) async throws -> Bool {
        do {
            return try await next(within: seconds) == nil && !ended
        } catch is StreamTimedOut {
            return true
        }
    }

    func close() { client.close() }
}

struct StreamTimedOut: Error {
    let seconds: Double
}
