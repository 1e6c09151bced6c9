import Foundation
import HTTPCore
import StreamHub
import Synchronization
import Testing
import TestSupport
@testable import SSEGateway

/// One value of a several-topic stream, read from its JSON data line.
struct TopicEvent: Equatable {
    var topic: String
    var id: String
    var data: String
    var event: String?

    init(topic: String, id: String, data: String, event: String? = nil) {
        self.topic = topic
        self.id = id
        self.data = data
        self.event = event
    }

    init(_ event: SSEEvent) throws {
        let object = try #require(try JSONSerialization.jsonObject(with: Data(event.data.utf8)) as? [String: String])
        topic = try #require(object["topic"])
        id = try #require(object["id"])
        data = object["data"] ?? ""
        self.event = object["event"]
    }
}

/// Several topics in one stream (API.md), over real sockets, plain and TLS; on Redis
/// too with `SSE_TEST_BACKEND=redis`.
struct TopicsStreamTests {
    /// `/events?topic=…`: the single-topic headers and `retry:`, each value one JSON line naming its topic, the cursor in `id:`.
    @Test(arguments: Transport.allCases)
    func eventsCarryJSONAndTheCursor(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            _ = try await gateway.publish("/events/a", "before")
            let stream = try await gateway.subscribe("/events?topic=a&topic=b%2Fc&topic=d")
            defer { stream.close() }
            #expect(stream.head.status == 200)
            #expect(stream.head.headers["Content-Type"] == "text/event-stream")
            #expect(stream.head.headers["Cache-Control"] == "no-cache")
            _ = try await gateway.publish("/events/b/c?event=tick", "one \"quoted\"\nline")
            _ = try await gateway.publish("/events/a", "a2")
            let events = try await stream.next(2)
            #expect(stream.retry == 2000)
            #expect(events.map(\.id) == ["1.1.0", "2.1.0"])
            #expect(events.map(\.event) == ["tick", nil])
            #expect(try events.map(TopicEvent.init) == [
                TopicEvent(topic: "b/c", id: "1", data: "one \"quoted\"\nline", event: "tick"),
                TopicEvent(topic: "a", id: "2", data: "a2"),
            ])
        }
    }

    /// `/state?topic=…`: the current value of each topic first, in parameter order, then changes; no `id:` line; Last-Event-ID ignored.
    @Test(arguments: Transport.allCases)
    func stateSendsEachCurrentValueThenChanges(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            _ = try await gateway.publish("/state/y", "y1")
            _ = try await gateway.publish("/state/x", "x1")
            _ = try await gateway.publish("/state/x", "x2")
            let stream = try await gateway.subscribe("/state?topic=x&topic=none&topic=y", headers: [("Last-Event-ID", "9.9.9")])
            defer { stream.close() }
            var events = try await stream.next(2)
            _ = try await gateway.publish("/state/none", "n1")
            events += try await stream.next(1)
            #expect(events.allSatisfy { $0.id == nil })
            #expect(try events.map(TopicEvent.init) == [
                TopicEvent(topic: "x", id: "2", data: "x2"), TopicEvent(topic: "y", id: "1", data: "y1"),
                TopicEvent(topic: "none", id: "1", data: "n1"),
            ])
        }
    }

    /// No topic, a duplicate, a bad name, more than 32: 400 with a one-line reason; HEAD gives the stream's head only.
    @Test(arguments: Transport.allCases)
    func badRequestsAreRefused(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let thirtyThree = (1...33).map { "topic=t\($0)" }.joined(separator: "&")
            for target in ["/events", "/state?x=1", "/events?topic=a&topic=a", "/events?topic=a%2F%2Fb",
                           "/state?topic=%2541", "/events?topic=a&topic=%zz", "/events?" + thirtyThree] {
                expectRefusal(try await gateway.send("GET", target), 400, target)
            }
            let head = try await gateway.send("HEAD", "/events?topic=a&topic=b")
            #expect(head.status == 200)
            #expect(head.head.headers["Content-Type"] == "text/event-stream")
            #expect(await gateway.gateway.engine.snapshot().eventsSubscribers == 0)
        }
    }

    /// 32 topics in one stream: one value each, in order, and a cursor of 32 positions; it leaves all 32 at once.
    @Test(arguments: Transport.allCases)
    func thirtyTwoTopics(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let names = (1...32).map { "many/\($0)" }
            let stream = try await gateway.subscribe("/events?" + names.map { "topic=\($0)" }.joined(separator: "&"))
            #expect(await gateway.gateway.engine.snapshot().eventsSubscribers == 1)
            for name in names { _ = try await gateway.publish("/events/" + name, name) }
            let events = try await stream.next(32)
            #expect(try events.map { try TopicEvent($0).topic } == names)
            #expect(events.last?.id == Array(repeating: "1", count: 32).joined(separator: "."))
            stream.close()
            try await expectTeardown(gateway)
        }
    }

    /// Publishers on several connections to several topics while a reader drops and resumes with its cursor: every value of every topic once, in order.
    @Test(arguments: Transport.allCases)
    func resumeWithTheCursorUnderConcurrentPublishing(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            let names = ["r/a", "r/b", "r/c", "r/d"]
            let perTopic = 60
            let target = "/events?" + names.map { "topic=\($0)" }.joined(separator: "&")
            var stream = try await gateway.subscribe(target)
            final class Published: Sendable { let count = Atomic<Int>(0) }
            let published = Published()
            let publishing = Task {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for name in names {
                        group.addTask {
                            for index in 1...perTopic {
                                _ = try await gateway.publish("/events/" + name, "\(name)#\(index)")
                                published.count.add(1, ordering: .relaxed)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
            }
            var seen: [TopicEvent] = []
            for round in 0..<3 {
                // Read some, drop the connection mid-stream, resume from the last cursor.
                let batch = try await stream.next(40)
                seen += try batch.map(TopicEvent.init)
                let cursor = try #require(batch.last?.id)
                stream.close()
                if round < 2 {
                    // Resume once publishing went on while no stream was open (or ended).
                    let atClose = published.count.load(ordering: .relaxed)
                    #expect(await eventually(upTo: 10) {
                        let now = published.count.load(ordering: .relaxed)
                        return now >= atClose + 4 || now == names.count * perTopic
                    })
                }
                stream = try await gateway.subscribe(target, headers: [("Last-Event-ID", cursor)])
            }
            try await publishing.value
            seen += try await stream.next(names.count * perTopic - seen.count).map(TopicEvent.init)
            stream.close()
            for name in names {
                let values = seen.filter { $0.topic == name }
                #expect(values.map(\.id) == (1...perTopic).map { "\($0)" }, "\(name)")
                #expect(values.map(\.data) == (1...perTopic).map { "\(name)#\($0)" })
            }
            try await expectTeardown(gateway)
        }
    }

    /// A cursor older than one topic's window: a gap naming that topic, without an `id:` line, then what the window holds; the other topic resumes exactly.
    @Test(arguments: Transport.allCases)
    func gapPerTopic(_ transport: Transport) async throws {
        try await withGateway(over: transport, { $0.replayCount = 3 }) { gateway in
            for index in 1...6 { _ = try await gateway.publish("/events/g/a", "a\(index)") }
            for index in 1...2 { _ = try await gateway.publish("/events/g/b", "b\(index)") }
            let stream = try await gateway.subscribe("/events?topic=g/a&topic=g/b", headers: [("Last-Event-ID", "1.1")])
            defer { stream.close() }
            let events = try await stream.next(5)
            #expect(events.map(\.event) == ["gap", nil, nil, nil, nil])
            #expect(events[0].id == nil)  // No id line before it: the cursor did not move.
            #expect(try TopicEvent(events[0]) == TopicEvent(topic: "g/a", id: "2", data: ""))
            #expect(try events.dropFirst().map { try TopicEvent($0).data } == ["a4", "a5", "a6", "b2"])
            #expect(events.dropFirst().map(\.id) == ["4.1", "5.1", "6.1", "6.2"])
            // A malformed cursor, or one of another count, is absent: live only.
            let fresh = try await gateway.subscribe("/events?topic=g/a&topic=g/b", headers: [("Last-Event-ID", "1")])
            defer { fresh.close() }
            #expect(try await fresh.staysQuiet(for: 0.3))
        }
    }

    /// A reader that does not read: on /state it ends up with the newest value of each topic; on /events the queue (all topics together) overflows and the stream is cut.
    @Test(arguments: Transport.allCases)
    func slowReadersOnBothChannels(_ transport: Transport) async throws {
        try await withGateway(over: transport, {
            $0.eventsQueueLimit = 8
            $0.maxBodyBytes = 200_000
        }) { gateway in
            let state = try await gateway.subscribe("/state?topic=s/a&topic=s/b")
            let events = try await gateway.subscribe("/events?topic=s/a&topic=s/b")
            defer { state.close(); events.close() }
            let big = String(repeating: "x", count: 100_000)
            // 15 MB on the events stream, more than the kernel holds for a client that does not read.
            for index in 1...150 {
                _ = try await gateway.publish(index % 2 == 0 ? "/state/s/a" : "/state/s/b", "\(index) \(big)")
                _ = try await gateway.publish(index % 2 == 0 ? "/events/s/a" : "/events/s/b", "\(index) \(big)")
            }
            var last: [String: String] = [:]
            while last["s/a"] != "150" || last["s/b"] != "149" {
                let value = try TopicEvent(try #require(try await state.next(within: 10)))
                last[value.topic] = String(value.data.prefix { $0 != " " })
            }
            #expect(try await gateway.waitForMetric("sse_gateway_slow_subscriber_disconnects_total", toBe: 1, within: 10) == 1)
            #expect(await gateway.gateway.engine.snapshot().eventsSubscribers == 0)
        }
    }

    /// Streams of several topics that come and go leave every topic's table empty.
    @Test(arguments: Transport.allCases)
    func teardownToZeroAcrossTopics(_ transport: Transport) async throws {
        try await withGateway(over: transport) { gateway in
            var streams: [SSETestClient] = []
            for index in 0..<6 {
                let names = (0..<10).map { "z/\(($0 + index) % 12)" }
                let channel = index % 2 == 0 ? "/events" : "/state"
                streams.append(try await gateway.subscribe(channel + "?" + names.map { "topic=\($0)" }.joined(separator: "&")))
            }
            let snapshot = await gateway.gateway.engine.snapshot()
            #expect(snapshot.eventsSubscribers == 3 && snapshot.stateSubscribers == 3)
            for stream in streams { stream.close() }
            try await expectTeardown(gateway, topics: true)
        }
    }

    /// With tokens: a several-topic stream needs a token granting every one of its topics (403 otherwise, nothing subscribed); `?access_token=` beside the `topic` parameters works.
    @Test func tokenMustGrantEveryTopic() async throws {
        let secret = "several-topics-secret-\(UUID().uuidString)"
        try await withGateway({
            $0.jwtSecret = secret
            $0.subscribeAuth = .token
        }) { gateway in
            func token(_ patterns: [String]) -> String {
                TestTokens.make(claims: TestTokens.claims(subscribe: patterns, exp: TestTokens.now + 3600),
                                signer: .hmac(Array(secret.utf8)))
            }
            let partial = try await gateway.send("GET", "/events?topic=news/1&topic=chat/1",
                                                 headers: [("Authorization", "Bearer " + token(["news/*"]))])
            #expect(partial.status == 403)
            #expect(try await gateway.send("GET", "/state?topic=news/1").status == 401)
            #expect(await gateway.gateway.engine.snapshot().eventsSubscribers == 0)
            let stream = try await gateway.subscribe("/events?topic=news/1&access_token=\(token(["news/*", "chat/*"]))&topic=chat/1")
            defer { stream.close() }
            #expect(stream.head.status == 200)
            let publisher = TestTokens.make(claims: TestTokens.claims(publish: ["*"], exp: TestTokens.now + 3600),
                                            signer: .hmac(Array(secret.utf8)))
            _ = try await gateway.publish("/events/chat/1", "hello", headers: [("Authorization", "Bearer " + publisher)])
            let event = try #require(try await stream.next())
            #expect(try TopicEvent(event) == TopicEvent(topic: "chat/1", id: "1", data: "hello"))
            #expect(event.id == "0.1")
        }
    }

    /// Waits until the engine holds no subscriber (and, with `topics`, no topic: none was published to).
    private func expectTeardown(_ gateway: RunningGateway, topics: Bool = false) async throws {
        var snapshot = await gateway.gateway.engine.snapshot()
        _ = await eventually(upTo: 10, every: .milliseconds(20)) {
            await gateway.gateway.engine.sweep()
            snapshot = await gateway.gateway.engine.snapshot()
            return snapshot.stateSubscribers + snapshot.eventsSubscribers + (topics ? snapshot.topics : 0) == 0
        }
        #expect(snapshot.stateSubscribers == 0 && snapshot.eventsSubscribers == 0)
        if topics { #expect(snapshot.topics == 0) }
    }
}
