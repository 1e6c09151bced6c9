import HTTPCore
@testable import SSEGateway
@testable import SSELoad

/// Runs a real gateway on an ephemeral port of 127.0.0.1 inside the test
/// process for the duration of `body`, then stops it and waits for it to end.
func withGateway(_ body: (_ port: Int) async throws -> Void) async throws {
    let gateway = try startedGateway()
    let running = Task { await gateway.run(handlingSignals: false) }
    do {
        try await body(gateway.port)
    } catch {
        gateway.stop()
        await running.value
        throw error
    }
    gateway.stop()
    await running.value
}

/// A gateway bound to an ephemeral port, with a short shutdown grace; not yet running.
func startedGateway() throws -> Gateway {
    var configuration = GatewayConfiguration()
    configuration.port = 0
    configuration.shutdownGrace = .milliseconds(400)
    return try Gateway(configuration: configuration)
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
func sseResponse(_ payloads: [Payload], size: Int = 64) -> [UInt8] {
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
