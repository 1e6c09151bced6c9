import Foundation
import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// What API.md promises a `/state` reader beyond StreamingTests: the configured
/// `retry:`, and a stalled reader that is never cut and ends on the newest value.
struct StateReaderTests {
    /// The `retry:` line that opens every stream carries the configured value.
    @Test(arguments: Transport.allCases)
    func retryIsConfigurable(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.retryMilliseconds = 750 }) { gateway in
            for target in ["/state/r", "/events/r"] {
                let stream = try await gateway.subscribe(target)
                defer { stream.close() }
                _ = try await gateway.publish(target, "v")
                #expect(try await stream.next(within: 10)?.data == "v")
                #expect(stream.retry == 750, "\(target)")
            }
        }
    }

    /// A stalled `/state` reader is not cut and does not hold up the publisher; once it reads, its values come in id order and end on the newest.
    @Test(arguments: Transport.allCases)
    func stalledStateReaderEndsOnTheNewest(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.eventsQueueLimit = 4 }) { gateway in
            let stalled = try await gateway.subscribe("/state/big")
            defer { stalled.close() }
            let count = 200
            let payload = String(repeating: "s", count: 8 * 1024)
            for i in 1...count { _ = try await gateway.publish("/state/big", "\(i) \(payload)") }

            var ids: [Int] = []
            while ids.last != count {
                guard let event = try await stalled.next(within: 10) else { break }
                ids.append(Int(event.id ?? "") ?? -1)
                #expect(event.data == "\(ids.last ?? -1) \(payload)")
            }
            #expect(ids.last == count, "the stream ended or stopped short of the newest value")
            #expect(ids == ids.sorted() && Set(ids).count == ids.count, "ids out of order or repeated")
            #expect(try await gateway.metrics()["sse_gateway_slow_subscriber_disconnects_total"] == 0)
        }
    }
}
