import HTTPCore
@testable import SSELoad
import TestSupport

/// Runs the real `sse-gateway` (TestSupport's `GatewayProcess`, with a short shutdown
/// grace) for the duration of `body`, then stops it.
func withGateway(_ body: (_ port: Int) async throws -> Void) async throws {
    try await withGatewayProcess(["--shutdown-grace", "400ms"]) { gateway in try await body(gateway.port) }
}

/// A small, fast run against `port`: no ramp, short settle, a topic prefix of its own.
func quickConfiguration(port: Int, _ change: (inout LoadConfiguration) -> Void = { _ in }) -> LoadConfiguration {
    var configuration = LoadConfiguration()
    configuration.target = LoadTarget(host: "127.0.0.1", port: port, basePath: "")
    configuration.ramp = .zero
    // Generous bounds that cost nothing when things go well: settling ends as
    // soon as everything arrived, publishing at the publish limit.
    configuration.settle = .seconds(10)
    configuration.duration = .seconds(20)
    configuration.connectTimeout = .seconds(10)
    change(&configuration)
    return configuration
}

/// The bytes of a chunked `200` SSE response carrying one event per payload
/// (ids from 1), split into a head and one chunk per event.
func sseResponse(_ payloads: [SSELoad.Payload], size: Int = 64) -> [UInt8] {
    var bytes = Array("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
    func chunk(_ text: String) {
        let body = Array(text.utf8)
        bytes += Array((String(body.count, radix: 16) + "\r\n").utf8) + body + Array("\r\n".utf8)
    }
    chunk("retry: 2000\n\n")
    for (index, payload) in payloads.enumerated() {
        chunk("id: \(index + 1)\ndata: \(String(decoding: payload.encoded(size: size), as: UTF8.self))\n\n")
    }
    return bytes
}
