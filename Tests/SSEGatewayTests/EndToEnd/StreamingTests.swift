import Foundation
import HTTPCore
import StreamHub
import Testing
import TestSupport
@testable import SSEGateway

/// Replay-latest and passthrough through the HTTP layer, over real sockets;
/// every test runs over plain HTTP and over TLS.
struct StreamingTests {
    /// A state subscriber gets the SSE headers, `retry:` first, the current value, then every change.
    @Test(arguments: Transport.allCases)
    func stateReplaysTheLatestValueThenChanges(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            _ = try await gateway.publish("/state/room", "v1")
            #expect(try await gateway.publish("/state/room", "v2") == 2)
            let stream = try await gateway.subscribe("/state/room")
            defer { stream.close() }
            #expect(stream.head.status == 200)
            #expect(stream.head.headers["Content-Type"] == "text/event-stream")
            #expect(stream.head.headers["Cache-Control"] == "no-cache")
            #expect(stream.head.headers["X-Accel-Buffering"] == "no")
            let first = try await stream.next()
            #expect(stream.retry == 2000)
            #expect(first == SSEEvent(id: "2", event: nil, data: "v2"))
            _ = try await gateway.publish("/state/room", "v3")
            #expect(try await stream.next() == SSEEvent(id: "3", event: nil, data: "v3"))
        }
    }

    /// A state subscriber to a topic with no value yet receives nothing until the first publish.
    @Test(arguments: Transport.allCases)
    func stateWithoutValueWaitsForTheFirst(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/state/empty")
            defer { stream.close() }
            #expect(try await stream.staysQuiet(for: 0.3))
            _ = try await gateway.publish("/state/empty", "first")
            #expect(try await stream.next()?.data == "first")
        }
    }

    /// An events subscriber gets nothing published before it subscribed, then every event in order with its id.
    @Test(arguments: Transport.allCases)
    func eventsArePassthroughInOrder(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            _ = try await gateway.publish("/events/feed", "old")
            let stream = try await gateway.subscribe("/events/feed")
            defer { stream.close() }
            for i in 0..<20 { _ = try await gateway.publish("/events/feed?event=tick", "e\(i)") }
            let events = try await stream.next(20)
            #expect(events.map(\.data) == (0..<20).map { "e\($0)" })
            #expect(events.map(\.id) == (2...21).map { "\($0)" })
            #expect(events.allSatisfy { $0.event == "tick" })
        }
    }

    /// Multi-line values (LF, CRLF, CR) and unicode come back as sent, with line endings as the SSE spec parses them.
    @Test(arguments: Transport.allCases)
    func multiLineAndUnicodeValuesRoundTrip(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let stream = try await gateway.subscribe("/events/text")
            defer { stream.close() }
            _ = try await gateway.publish("/events/text", "one\ntwo\r\nthree\rfour")
            _ = try await gateway.publish("/events/text", "héllo, 世界 🌍")
            _ = try await gateway.publish("/events/text", "")
            let events = try await stream.next(3)
            #expect(events.map(\.data) == ["one\ntwo\nthree\nfour", "héllo, 世界 🌍", ""])
        }
    }

    /// Two subscribers of one topic each see every value (no split between readers).
    @Test(arguments: Transport.allCases)
    func everySubscriberSeesEveryValue(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let a = try await gateway.subscribe("/events/fan")
            let b = try await gateway.subscribe("/events/fan")
            defer { a.close(); b.close() }
            for i in 0..<50 { _ = try await gateway.publish("/events/fan", "\(i)") }
            #expect(try await a.next(50).map(\.data) == (0..<50).map { "\($0)" })
            #expect(try await b.next(50).map(\.data) == (0..<50).map { "\($0)" })
        }
    }

    /// A client reconnecting with `Last-Event-ID: N` gets exactly N+1… from the window, then live events.
    @Test(arguments: Transport.allCases)
    func lastEventIDResumesFromTheWindow(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            for i in 1...5 { _ = try await gateway.publish("/events/resume", "e\(i)") }
            let stream = try await gateway.subscribe("/events/resume", headers: [("Last-Event-ID", "2")])
            defer { stream.close() }
            #expect(try await stream.next(3).map(\.id) == ["3", "4", "5"])
            _ = try await gateway.publish("/events/resume", "e6")
            #expect(try await stream.next() == SSEEvent(id: "6", event: nil, data: "e6"))
        }
    }

    /// A topic forgotten (nobody subscribed, its window expired) and used again goes on from
    /// its ids: a client resuming with an id from before it was forgotten gets what was
    /// published since (or, if that expired too on a slow machine, a `gap` naming the first
    /// of it), never the newer events that happen to carry the ids it expects.
    @Test(arguments: Transport.allCases)
    func aForgottenTopicGoesOnFromItsIds(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.replayMaxAge = .seconds(1) }) { gateway in
            for i in 1...3 { _ = try await gateway.publish("/events/forgot", "a\(i)") }
            // Forgotten by a sweep (every second) once its window has expired.
            #expect(try await eventually(within: 10) { try await gateway.metrics()["sse_gateway_topics"] == 0 })
            var ids: [UInt64] = []
            for i in 1...5 { ids.append(try await gateway.publish("/events/forgot", "b\(i)")) }
            #expect(ids == [4, 5, 6, 7, 8])
            let stream = try await gateway.subscribe("/events/forgot", headers: [("Last-Event-ID", "3")])
            defer { stream.close() }
            let first = try await stream.next()
            #expect(first == SSEEvent(id: "4", event: nil, data: "b1") || first == SSEEvent(id: nil, event: "gap", data: "4"),
                    "\(String(describing: first))")
        }
    }

    /// Resuming from an id older than the window gets a `gap` event naming the first lost id, then the window.
    @Test(arguments: Transport.allCases)
    func resumeOlderThanTheWindowGetsAGap(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.replayCount = 3 }) { gateway in
            for i in 1...10 { _ = try await gateway.publish("/events/g", "e\(i)") }
            let stream = try await gateway.subscribe("/events/g", headers: [("Last-Event-ID", "2")])
            defer { stream.close() }
            let events = try await stream.next(4)
            #expect(events.first?.event == "gap")
            #expect(events.first?.data == "3")
            #expect(events.dropFirst().map(\.id) == ["8", "9", "10"])
        }
    }

    /// A `Last-Event-ID` that is not a number, or newer than the last id, counts as absent; `/state` ignores it.
    @Test(arguments: Transport.allCases)
    func invalidLastEventIDIsIgnored(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            for i in 1...3 { _ = try await gateway.publish("/events/inv", "e\(i)") }
            for bad in ["abc", "99", "-1", "1.5"] {
                let stream = try await gateway.subscribe("/events/inv", headers: [("Last-Event-ID", bad)])
                #expect(try await stream.staysQuiet(for: 0.2), "Last-Event-ID \(bad) replayed something")
                stream.close()
            }
            _ = try await gateway.publish("/state/inv", "s")
            let state = try await gateway.subscribe("/state/inv", headers: [("Last-Event-ID", "1")])
            defer { state.close() }
            #expect(try await state.next()?.data == "s")
        }
    }

    /// A stream with nothing to say sends a heartbeat comment when it has been silent for
    /// the heartbeat interval: none before, one soon after (a loaded machine's lateness
    /// allowed for; that it is scheduled at the moment the silence ends, not on a periodic
    /// check, `MaintenanceScheduleTests` shows turn by turn on an injected clock).
    @Test(arguments: Transport.allCases)
    func idleStreamsGetHeartbeats(_ transport: Transport) async throws {
        // 2 s of silence: none after 1.2 s (the client may start looking a little after
        // the subscriber joined), one by 3.4 s (CI's loaded --loops 1 pass once saw none
        // by 2.6 s over TLS).
        try await withGateway(over: transport, { $0.heartbeatInterval = .seconds(2) }) { gateway in
            let stream = try await gateway.subscribe("/events/quiet")
            defer { stream.close() }
            _ = try await stream.staysQuiet(for: 1.2)
            #expect(stream.comments == 0)
            _ = try await stream.staysQuiet(for: 2.2)
            #expect(stream.comments >= 1)
        }
    }

    /// 200 subscribers that connect and vanish leave the subscriber gauge at 0 within a second.
    @Test(arguments: Transport.allCases)
    func vanishedSubscribersLeaveTheGauges(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            var streams: [SSETestClient] = []
            for i in 0..<200 { streams.append(try await gateway.subscribe(i % 2 == 0 ? "/events/churn" : "/state/churn")) }
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 100, within: 2) == 100)
            for stream in streams { stream.close() }
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 0, within: 1) == 0)
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"state\"}", toBe: 0, within: 1) == 0)
            // Only the metrics request itself remains connected (at most briefly).
            #expect(try await gateway.waitForMetric("sse_gateway_connections", toBe: 1, within: 1) == 1)
        }
    }

    /// A subscriber that never reads is disconnected and counted, while a reading subscriber of the same topic gets everything.
    @Test(arguments: Transport.allCases)
    func stalledEventsSubscriberIsDisconnectedOthersKeepReceiving(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.eventsQueueLimit = 16 }) { gateway in
            let stalled = try await gateway.connect()
            defer { stalled.close() }
            try await stalled.request("GET", "/events/slow")
            let reader = try await gateway.subscribe("/events/slow")
            defer { reader.close() }
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 2, within: 2) == 2)
            let payload = String(repeating: "x", count: 32 * 1024)
            let count = 300
            // The reader stays within a few events of the publisher, well inside its queue
            // limit, as a client that keeps up does: on a loaded machine a free-running
            // publisher in this same process could outrun it and get it cut too.
            let lag = 4
            var received: [SSEEvent] = []
            for i in 0..<count {
                _ = try await gateway.publish("/events/slow", "\(i) \(payload)")
                if i >= lag, let event = try await reader.next(within: 10) { received.append(event) }
            }
            received += try await reader.next(count - received.count, within: 10)
            #expect(received.count == count)
            #expect(received.map { $0.data.prefix { $0 != " " } } == (0..<count).map { Substring("\($0)") })
            #expect(try await gateway.waitForMetric("sse_gateway_slow_subscriber_disconnects_total", toBe: 1, within: 2) == 1)
            #expect(try await gateway.waitForMetric("sse_gateway_subscribers{channel=\"events\"}", toBe: 1, within: 2) == 1)
        }
    }

    /// Shutting the gateway down ends every open stream cleanly.
    @Test(arguments: Transport.allCases)
    func shutdownEndsStreams(_ transport: Transport) async throws {
        let gateway = try await RunningGateway.start(over: transport)
        let a = try await gateway.subscribe("/events/bye")
        let b = try await gateway.subscribe("/state/bye")
        defer { a.close(); b.close() }
        // The 2 s exit budget is measured on the real executable (ShutdownTests);
        // in process, on a loaded machine, only "it ends, and the streams end" is asserted.
        await gateway.stop()
        #expect(try await a.next() == nil)
        #expect(try await b.next() == nil)
    }
}
