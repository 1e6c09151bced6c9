import Foundation
import TestSupport

/// One churn cycle on the topics `churn/<t>`: survivors subscribe for the whole
/// cycle, one publisher per topic posts every 100 ms (events each time, state
/// every fourth time), `Reliability.Churn.concurrency` workers run `sessions`
/// short subscriptions between them, then the publishers stop, the survivors
/// read through the last ids and leave. The topics live on from cycle to cycle
/// (each holds a state value), their ids going on from the ledger's: the same
/// topics churned for half an hour show what a long-lived deployment keeps.
/// Over `.tls` every connection speaks HTTPS, and some sessions give up
/// during the handshake (`ChurnCycle+Handshake.swift`).
struct ChurnCycle {
    let sessions: Int
    let port: Int
    let ledger: TopicLedger
    var transport: Transport = .plain

    func topic(_ index: Int) -> String { "churn/\(index)" }

    func run() async throws -> Result {
        let publishing = Flag(true)
        let finals = SharedValue<[(events: UInt64, state: UInt64)]?>(nil)
        let opened = Counter()
        return try await withThrowingTaskGroup(of: Result.self) { survivors in
            // Survivors: two on /events and one on /state per topic, for the whole cycle.
            for index in 0..<Reliability.Churn.topics {
                for (kind, channel) in [StreamChannel.events, .events, .state].enumerated() {
                    survivors.addTask {
                        try await survive(topic: index, channel: channel, graceful: kind != 1, opened: opened, finals: finals)
                    }
                }
            }
            let deadline = ContinuousClock.now + .seconds(20)
            while opened.value < Reliability.Churn.topics * 3 {
                guard ContinuousClock.now < deadline else { throw HarnessFailure("survivors not subscribed within 20 s") }
                try await Task.sleep(for: .milliseconds(10))
            }
            async let published = publishAll(while: publishing)
            async let sessionResults = runSessions(until: publishing)
            var result = await sessionResults
            publishing.set(false)
            result.merge(await published)
            finals.set((0..<Reliability.Churn.topics).map {
                (ledger.acked(topic: $0, channel: .events), ledger.acked(topic: $0, channel: .state))
            })
            for try await survivor in survivors { result.merge(survivor) }
            return result
        }
    }

    /// `Reliability.Churn.concurrency` workers taking session numbers in turn until `sessions`
    /// ran (or a publisher failed: then no event would come).
    private func runSessions(until publishing: Flag) async -> Result {
        let next = Counter()
        return await withTaskGroup(of: Result.self, returning: Result.self) { workers in
            for _ in 0..<Reliability.Churn.concurrency {
                workers.addTask {
                    var mine = Result()
                    while publishing.value {
                        let session = next.increment()
                        if session >= sessions { break }
                        mine.merge(await runSession(session))
                    }
                    return mine
                }
            }
            var all = Result()
            for await one in workers { all.merge(one) }
            return all
        }
    }

    /// A subscriber for the whole cycle: it reads as events come until the
    /// publishers stop, then through the last ids, then leaves.
    private func survive(topic index: Int, channel: StreamChannel, graceful: Bool, opened: Counter,
                         finals: SharedValue<[(events: UInt64, state: UInt64)]?>) async throws -> Result {
        var result = Result()
        result.survivors = 1
        let name = "survivor \(channel.rawValue)/\(topic(index))"
        let stream = try await CheckedStream.open(port: port, target: "/\(channel.rawValue)/\(topic(index))",
                                                  order: channel == .events ? .contiguous : .increasing, tls: transport.client,
                                                  check: Self.dataMatchesID)
        defer { stream.close() }
        let highest = ledger.acked(topic: index, channel: channel) + 2
        opened.increment()
        while finals.value == nil && !stream.ended && !Task.isCancelled {
            _ = try await stream.read(count: stream.count + 1, within: 0.3)
        }
        guard let ids = finals.value else { return result }
        let final = channel == .events ? ids[index].events : ids[index].state
        let reached = try await stream.read(throughID: final, within: 10)
        if let problem = stream.problem { result.problems.append("\(name): \(problem)") }
        if !reached || stream.last != final {
            result.problems.append("\(name): last id \(stream.last.map(String.init) ?? "none"), published \(final)")
        }
        if let first = stream.first, first > highest {
            result.problems.append("\(name): first id \(first), but \(highest) was published after it subscribed")
        }
        result.eventsRead = stream.count
        if graceful {
            if await stream.leaveGracefully(within: 10) == .stillOpen {
                result.problems.append("\(name): still open 10 s after its FIN")
            }
        } else {
            stream.leaveAbruptly()
        }
        return result
    }

    /// One publisher per topic until `publishing` turns false.
    private func publishAll(while publishing: Flag) async -> Result {
        await withTaskGroup(of: Result.self, returning: Result.self) { group in
            for index in 0..<Reliability.Churn.topics {
                group.addTask { await publish(topic: index, while: publishing) }
            }
            var all = Result()
            for await one in group { all.merge(one) }
            return all
        }
    }

    /// The publisher of one topic: every 100 ms an event, every fourth time a state
    /// value too, each `"<sequence> xxx…"` (going on from the ledger's); each
    /// reply's id must be the sequence.
    /// A failure stops every publisher (and with them the sessions).
    private func publish(topic index: Int, while publishing: Flag) async -> Result {
        let publisher = KeepAlivePublisher(port: port, tls: transport.client)
        defer { publisher.close() }
        var result = Result()
        let start = ContinuousClock.now + .milliseconds(index * 100 / Reliability.Churn.topics)
        var tick = 0
        let eventsBefore = ledger.acked(topic: index, channel: .events)
        var stateSequence = ledger.acked(topic: index, channel: .state)
        do {
            while publishing.value {
                try await Task.sleep(until: start + .milliseconds(100 * tick), clock: .continuous)
                tick += 1
                let sequence = eventsBefore + UInt64(tick)
                let id = try await publisher.publish("/events/\(topic(index))", payload("\(sequence)", size: 120))
                if id != sequence { result.problems.append("events/\(topic(index)): publish \(sequence) got id \(id)") }
                ledger.note(id, topic: index, channel: .events)
                result.publishes += 1
                if tick % 4 == 0 {
                    stateSequence += 1
                    let stateID = try await publisher.publish("/state/\(topic(index))", payload("\(stateSequence)", size: 120))
                    if stateID != stateSequence {
                        result.problems.append("state/\(topic(index)): publish \(stateSequence) got id \(stateID)")
                    }
                    ledger.note(stateID, topic: index, channel: .state)
                    result.publishes += 1
                }
            }
        } catch {
            result.problems.append("publisher of \(topic(index)): \(error)")
            publishing.set(false)
        }
        return result
    }

    /// An event's data starts with its id (one publisher per topic and channel, its sequence the id).
    static func dataMatchesID(_ id: UInt64, _ data: String) -> String? {
        payloadTag(data) == "\(id)" ? nil : "data \(data.prefix(24)) under id \(id)"
    }
}
