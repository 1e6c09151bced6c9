import HTTPCore
import Testing
import TestSupport
@testable import SSEGateway

/// Issue 16's write path: the event loop writes a subscriber's frames itself and
/// hands a batch the socket cannot take at once to the stream's task. What a
/// client sees must not change: every event once, in order, intact; a client that
/// leaves mid-write leaves the hub. Over plain HTTP and TLS.
struct BlockedWriteTests {
    static let count = 200
    static let size = 60 * 1024

    /// 60 KB of the alphabet over and over: a record or chunk boundary (16 KiB, not
    /// a multiple of 26) moved or repeated would show.
    static let filler = String(repeating: "abcdefghijklmnopqrstuvwxyz", count: size / 26)

    /// The value published as event `index`: its number around the filler.
    static func value(_ index: Int) -> String {
        "\(index):" + filler + ":\(index)"
    }

    /// A subscriber that reads nothing while 12 MB are published to it (more than
    /// loopback's buffers hold, so writes block mid-batch and the rest waits for
    /// writability), then reads: it gets all 200 events, in order, each intact.
    @Test(arguments: Transport.allCases)
    func aBlockedSubscriberGetsEveryEventInOrderOnceItReads(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/big")
            defer { stream.close() }
            for index in 1...Self.count {
                #expect(try await gateway.publish("/events/big", Self.value(index)) == UInt64(index))
            }
            let blocked = try await gateway.metrics()["sse_gateway_stream_writes_blocked_total"] ?? 0
            #expect(blocked >= 1, "the socket never pushed back: the test did not reach the blocked path")
            let events = try await stream.next(Self.count, within: 60)
            #expect(events.map(\.id) == (1...Self.count).map { "\($0)" })
            #expect(events.enumerated().allSatisfy { $0.element.data == Self.value($0.offset + 1) })
            // And the stream goes on live afterwards.
            _ = try await gateway.publish("/events/big", "small")
            #expect(try await stream.next()?.data == "small")
        }
    }

    /// A subscriber that reads a little of a blocked stream and then resets the
    /// connection, while the rest is being written: it leaves the hub (the gauge
    /// returns to 0) and the gateway goes on serving.
    @Test(arguments: Transport.allCases)
    func aSubscriberThatLeavesMidWriteLeavesTheHub(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/leaving")
            for index in 1...Self.count {
                _ = try await gateway.publish("/events/leaving", Self.value(index))
            }
            _ = try await stream.next(3, within: 30)
            stream.leaveAbruptly()
            let gauge = try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 0, within: 10)
            #expect(gauge == 0)
            let next = try await gateway.subscribe("/events/leaving")
            defer { next.close() }
            _ = try await gateway.publish("/events/leaving", "still here")
            #expect(try await next.next()?.data == "still here")
        }
    }
}
