import HTTPCore
import Testing
@testable import SSELoad

/// Runs a plain HTTP server on an ephemeral port of 127.0.0.1 answering every
/// request with `respond`, for the duration of `body`.
private func withServer(_ respond: @escaping @Sendable (HTTPRequest) -> HTTPResponse,
                        _ body: (_ port: Int) async throws -> Void) async throws {
    var configuration = HTTPServerConfiguration()
    configuration.port = 0
    let server = try HTTPServer(configuration: configuration) { request in respond(request) }
    let running = Task { await server.run() }
    defer { running.cancel() }
    try await body(server.port)
    server.shutdown()
    running.cancel()
    await running.value
}

/// Deliveries owed are counted from the subscribers this process has streaming,
/// not taken on the server's word; the server's count is kept beside them.
@Suite(.serialized) struct PublishAccountingTests {
    /// Nchan answers `202 Accepted` (no subscriber) or `201 Created`: both are acks.
    @Test func anyTwoHundredIsAnAck() async throws {
        let nchanLike: @Sendable (HTTPRequest) -> HTTPResponse = { _ in
            HTTPResponse(status: HTTPStatus(code: 202, reason: "Accepted"),
                         body: Array("{\"messages\": 1, \"requested\": -1, \"subscribers\": 0, \"last_message_id\": \"1:0\" }".utf8))
        }
        try await withServer(nchanLike) { port in
            let configuration = quickConfiguration(port: port) {
                $0.subscribers = 0
                $0.publishers = 2
                $0.rate = 0
                $0.publishLimit = 10
                $0.settle = .zero
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.publishesAcked == 10)
            #expect(report.publishesFailed == 0)
            #expect(report.expectedDeliveries == 0)
            #expect(report.serverCountedDeliveries == 0)
            #expect(report.subscriberCountMismatches == 0)
            #expect(report.firstError == nil)
        }
    }

    /// A server that claims subscribers nobody here holds does not raise the deliveries owed; the claim is reported.
    @Test func aServerCountThatDisagreesIsReportedNotTrusted() async throws {
        let boastful: @Sendable (HTTPRequest) -> HTTPResponse = { _ in
            HTTPResponse(status: .ok, body: Array("{\"id\":\"1\",\"subscribers\":99}".utf8))
        }
        try await withServer(boastful) { port in
            let configuration = quickConfiguration(port: port) {
                $0.subscribers = 0
                $0.publishers = 1
                $0.rate = 0
                $0.publishLimit = 5
                $0.settle = .zero
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.publishesAcked == 5)
            #expect(report.expectedDeliveries == 0)
            #expect(report.loss == 0)
            #expect(report.serverCountedDeliveries == 5 * 99)
            #expect(report.subscriberCountMismatches == 5)
            #expect(report.jsonLine.contains("\"subscriber_count_mismatches\":5"))
        }
    }

    /// A `2xx` reply without a subscriber count is still an ack; the server's count is then unknown (null).
    @Test func aReplyWithoutACountIsAnAckWithAnUnknownServerCount() async throws {
        try await withServer({ _ in HTTPResponse(status: .noContent) }) { port in
            let configuration = quickConfiguration(port: port) {
                $0.subscribers = 0
                $0.publishers = 1
                $0.rate = 0
                $0.publishLimit = 3
                $0.settle = .zero
            }
            let report = try await LoadRun(configuration: configuration).run()
            #expect(report.publishesAcked == 3)
            #expect(report.serverCountedDeliveries == nil)
            #expect(report.jsonLine.contains("\"server_counted_deliveries\":null"))
        }
    }
}
