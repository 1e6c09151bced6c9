import StreamHub
import Testing
@testable import SSELoad

/// Duplicate and order checks, from one tracker up to the report.
struct AccountingTests {
    /// A sequence seen twice is a duplicate; a lower one not seen before is out of order; neither moves the newest.
    @Test func trackerTellsDuplicatesFromReorderings() {
        var tracker = SequenceTracker(publishers: 2)
        #expect(tracker.record(publisher: 0, sequence: 1) == .fresh)
        #expect(tracker.record(publisher: 0, sequence: 2) == .fresh)
        #expect(tracker.record(publisher: 0, sequence: 2) == .duplicate)
        #expect(tracker.record(publisher: 0, sequence: 4) == .fresh)
        #expect(tracker.record(publisher: 0, sequence: 3) == .outOfOrder)
        #expect(tracker.record(publisher: 0, sequence: 3) == .duplicate)
        #expect(tracker.record(publisher: 0, sequence: 1) == .duplicate)
        #expect(tracker.record(publisher: 0, sequence: 5) == .fresh)
        #expect(tracker.record(publisher: 1, sequence: 1) == .fresh)  // publishers are independent
        #expect(tracker.record(publisher: 2, sequence: 1) == .unrecognized)
    }

    /// The duplicate window spans 64 sequences; older repeats count as out of order, and a big jump clears it.
    @Test func trackerWindowIsSixtyFourWide() {
        var tracker = SequenceTracker(publishers: 1)
        for sequence in 1...200 as ClosedRange<UInt64> where sequence != 100 {
            #expect(tracker.record(publisher: 0, sequence: sequence) == .fresh)
        }
        #expect(tracker.record(publisher: 0, sequence: 136) == .duplicate)   // 64 below 200
        #expect(tracker.record(publisher: 0, sequence: 135) == .outOfOrder)  // 65 below: past the window
        #expect(tracker.record(publisher: 0, sequence: 100) == .outOfOrder)
        #expect(tracker.record(publisher: 0, sequence: 264) == .fresh)       // 200 is now bit 63
        #expect(tracker.record(publisher: 0, sequence: 200) == .duplicate)
        #expect(tracker.record(publisher: 0, sequence: 1000) == .fresh)
        #expect(tracker.record(publisher: 0, sequence: 999) == .outOfOrder)
    }

    /// An injected duplicate and an injected reordering in a real chunked SSE response are counted, in any read split.
    @Test func streamReportsInjectedDuplicateAndReordering() throws {
        let sent: UInt64 = 1_000
        let payloads = [1, 2, 2, 4, 3, 5].map { Payload(publisher: 0, sequence: $0, sentNanos: sent) }
        let bytes = sseResponse(payloads)
        for split in [1, 7, 64, bytes.count] {
            var stream = SubscriberStream(channel: .events, publishers: 1)
            var batch = DeliveryBatch()
            var offset = 0
            while offset < bytes.count {
                let end = min(bytes.count, offset + split)
                try stream.feed(Array(bytes[offset..<end]), receivedAt: sent + 2_000_000, into: &batch)
                offset = end
            }
            #expect(stream.status == 200)
            #expect(batch.received == 6)
            #expect(batch.duplicates == 1)
            #expect(batch.outOfOrder == 1)
            #expect(batch.latencies == Array(repeating: 2_000_000, count: 6))
            #expect(batch.lastTag == payloads[5].tag)
        }
    }

    /// Events that are not this run's payloads are counted apart and never as deliveries.
    @Test func foreignEventsAreUnrecognized() throws {
        var bytes = sseResponse([Payload(publisher: 0, sequence: 1, sentNanos: 5)])
        let foreign = Array("data: hello\n\n".utf8)
        bytes += Array((String(foreign.count, radix: 16) + "\r\n").utf8) + foreign + Array("\r\n".utf8)
        var stream = SubscriberStream(channel: .events, publishers: 1)
        var batch = DeliveryBatch()
        try stream.feed(bytes, receivedAt: 10, into: &batch)
        #expect(batch.received == 1)
        #expect(batch.unrecognized == 1)
    }

    /// On /state the replayed value (sent before the head arrived) is a delivery but not a latency sample.
    @Test func stateReplayIsNotALatencySample() throws {
        let bytes = sseResponse([Payload(publisher: 0, sequence: 1, sentNanos: 5)])
        var stream = SubscriberStream(channel: .state, publishers: 1)
        var batch = DeliveryBatch()
        try stream.feed(bytes, receivedAt: 100, into: &batch)
        #expect(batch.received == 1)
        #expect(batch.latencies.isEmpty)
    }

    /// Counts committed to the run's stats reach the report and its JSON line: duplicates, reorderings and loss.
    @Test func injectedFaultsReachTheReport() throws {
        let payloads = [1, 2, 2, 4, 3].map { Payload(publisher: 0, sequence: $0, sentNanos: 1) }
        var stream = SubscriberStream(channel: .events, publishers: 1)
        var batch = DeliveryBatch()
        try stream.feed(sseResponse(payloads), receivedAt: 1_000_001, into: &batch)
        let stats = LoadStats()
        stats.commit(&batch, subscriber: 0, at: 2)
        #expect(batch.received == 0)  // emptied for the next read
        var published = PublisherResult(topics: 1)
        published.acked = 5
        published.expected = 5
        var configuration = LoadConfiguration()
        configuration.subscribers = 1
        let report = LoadReport(configuration: configuration, stats: stats, published: published,
                                notOnLatest: 0, timeline: Timeline(startNanos: 0, publishStartNanos: 1,
                                                                   publishEndNanos: 1, endNanos: 2))
        #expect(report.eventsReceived == 5)
        #expect(report.duplicates == 1)
        #expect(report.outOfOrder == 1)
        #expect(report.loss == 1)  // 5 owed, 4 distinct arrived
        let json = report.jsonLine
        #expect(json.contains("\"duplicates\":1"))
        #expect(json.contains("\"out_of_order\":1"))
        #expect(json.contains("\"loss\":1"))
        #expect(json.contains("\"latency_p50_ms\":1"))
        #expect(report.summary.contains("1 duplicates, 1 out of order"))
    }

    /// The payload header round-trips, pads to the asked size and is never cut.
    @Test func payloadRoundTrips() {
        let payload = Payload(publisher: 3, sequence: 42, sentNanos: 123_456_789)
        let body = payload.encoded(size: 128)
        #expect(body.count == 128)
        #expect(Payload(parsing: String(decoding: body, as: UTF8.self)) == payload)
        #expect(payload.encoded(size: 4).count == "3:42:123456789:".utf8.count)
        #expect(Payload(parsing: "hello") == nil)
        #expect(Payload(parsing: "1:2:") == nil)
        #expect(Payload(parsing: "1:2:x:") == nil)
    }

    /// A publish answer is read for its subscriber count and id, the gateway's and Nchan's shapes alike.
    @Test func publishRepliesAreRead() {
        #expect(PublishReply(body: Array("{\"id\":\"17\",\"subscribers\":3}\n".utf8)) == PublishReply(id: "17", subscribers: 3))
        #expect(PublishReply(body: Array("{\"id\":\"17\",\"subscribers\":3}".utf8))?.numericID == 17)
        let nchan = Array("{\"messages\": 1, \"requested\": 0, \"subscribers\": 12, \"last_message_id\": \"1700000000:0\"}".utf8)
        #expect(PublishReply(body: nchan) == PublishReply(id: "1700000000:0", subscribers: 12))
        #expect(PublishReply(body: Array("ok".utf8)) == nil)
    }
}
