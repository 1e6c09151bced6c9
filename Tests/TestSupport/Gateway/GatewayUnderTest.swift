import Foundation
import HTTPCore

/// A gateway a test talks to, however it runs: inside the test process
/// (`RunningGateway`, SSEGatewayTests) or as the real executable
/// (`GatewayProcess`), over plain HTTP or TLS. Every client helper connects over
/// the gateway's transport, so a test written against them runs over both.
public protocol GatewayUnderTest: Sendable {
    /// The port it listens on, on 127.0.0.1.
    var port: Int { get }
    var transport: Transport { get }
}

/// The JSON a successful publish answers with.
public struct PublishReply: Decodable, Equatable, Sendable {
    public let id: String
    public let subscribers: Int

    public init(id: String, subscribers: Int) {
        self.id = id
        self.subscribers = subscribers
    }
}

extension GatewayUnderTest {
    /// A fresh client connection over the gateway's transport, in the HTTP version
    /// the run chose (`TestHTTP`).
    public func connect(deadline: ContinuousClock.Instant = .now + .seconds(10)) async throws -> HTTPClient {
        let client = try await HTTPClient.connect(port: port, deadline: deadline, tls: transport.client,
                                                  http2: TestHTTP.isHTTP2)
        if TestHTTP.isHTTP2 && !client.isHTTP2 {  // a pass that silently fell back would prove nothing
            client.close()
            throw HarnessFailure("SSE_TEST_HTTP=2, but ALPN chose \(client.connection.tlsALPNProtocol ?? "nothing")")
        }
        return client
    }

    /// One request on a fresh connection.
    public func send(_ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8]? = nil,
                     within seconds: Double = 10) async throws -> HTTPClient.Response {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        let client = try await connect(deadline: deadline)
        defer { client.close() }
        try await client.request(method, target, headers: headers, body: body)
        return try await client.response(deadline: deadline, requestWasHead: method == "HEAD")
    }

    /// `POST target` with `value` as the body.
    public func post(_ target: String, _ value: String, headers: [(String, String)] = []) async throws
        -> HTTPClient.Response
    {
        try await send("POST", target, headers: headers, body: Array(value.utf8))
    }

    /// Publishes `value`; the decoded reply (a status other than `200` throws).
    public func publishReply(_ target: String, _ value: String, headers: [(String, String)] = []) async throws
        -> PublishReply
    {
        let response = try await post(target, value, headers: headers)
        guard response.status == 200 else {
            throw HarnessFailure("publish to \(target) answered \(response.status): \(response.text)")
        }
        return try JSONDecoder().decode(PublishReply.self, from: Data(response.body))
    }

    /// Publishes `value`; the id it got (a status other than `200` throws).
    public func publish(_ target: String, _ value: String, headers: [(String, String)] = []) async throws -> UInt64 {
        UInt64(try await publishReply(target, value, headers: headers).id) ?? 0
    }

    /// Opens an SSE stream and reads its response head.
    public func subscribe(_ target: String, headers: [(String, String)] = []) async throws -> SSETestClient {
        try await SSETestClient.open(client: try await connect(), target: target, headers: headers)
    }

    /// Opens an SSE stream; the head is nil if it does not arrive within `seconds`.
    public func openStream(_ target: String, headWithin seconds: Double = 10) async throws
        -> (stream: SSETestClient, head: HTTPResponseParser.Head?)
    {
        try await SSETestClient.connect(port: port, target: target, tls: transport.client, headWithin: seconds)
    }

    /// `/metrics` on a fresh connection, as a map from `name{labels}` to value.
    public func metrics() async throws -> [String: Double] {
        MetricsText.parse(try await send("GET", "/metrics").text)
    }

    /// Polls `/metrics` until `metric` equals `value` or `seconds` pass; returns the last value seen.
    public func waitForMetric(_ metric: String, toBe value: Double, within seconds: Double) async throws -> Double? {
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

/// The Prometheus text `/metrics` answers, read as the tests use it.
public enum MetricsText {
    /// A map from `name{labels}` to value; comment lines are skipped. A family
    /// with labels and no bare sample also gets its sum under its bare name
    /// (`sse_gateway_connections` is every protocol's connections).
    public static func parse(_ text: String) -> [String: Double] {
        var values: [String: Double] = [:]
        var sums: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            guard parts.count == 2, let value = Double(parts[1]) else { continue }
            values[String(parts[0])] = value
            if let brace = parts[0].firstIndex(of: "{") { sums[String(parts[0][..<brace]), default: 0] += value }
        }
        for (name, sum) in sums where values[name] == nil { values[name] = sum }
        return values
    }
}

/// Where the package is: `public/` and the built executables are found from here.
public let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<4 { url.deleteLastPathComponent() }
    return url.path
}()
