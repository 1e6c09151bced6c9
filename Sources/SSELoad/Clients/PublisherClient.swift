import HTTPCore

/// One publisher, run as one task: a keep-alive connection on which it POSTs
/// timestamped payloads to the topics in turn (publisher p's k-th publish goes
/// to topic (p + k) % topics), paced by `Pacer`, one request in flight.
/// A failed exchange closes the connection; the next publish opens another.
struct PublisherClient: Sendable {
    let index: Int
    let plan: RunPlan
    let stats: LoadStats

    func run(pacer initial: Pacer, quota: Int?) async -> PublisherResult {
        let configuration = plan.configuration
        let endpoint = plan.endpoint(ofPublisher: index)
        var pacer = initial
        var result = PublisherResult(topics: configuration.topics)
        var sequences = [UInt64](repeating: 0, count: configuration.topics)
        var connection: PublishConnection?
        defer { connection?.close() }
        while quota.map({ result.attempted < $0 }) ?? true, !Task.isCancelled {
            guard let due = pacer.next(now: .now) else { break }
            if due > .now {
                do { try await Task.sleep(until: due, clock: .continuous) } catch { break }
            }
            let topic = (index + result.attempted) % configuration.topics
            sequences[topic] += 1
            result.attempted += 1
            let deadline = ContinuousClock.now + configuration.connectTimeout
            do {
                if connection == nil { connection = try await PublishConnection.open(endpoint.address, deadline: deadline) }
                // Deliveries owed: the topic's subscribers streaming now, as this process knows them
                // (a server's own count could hide a subscriber it never queued for).
                let streaming = stats.streaming(topic: topic)
                let sent = MonotonicClock.nanoseconds()
                let body = Payload(publisher: index, sequence: sequences[topic], sentNanos: sent).encoded(size: configuration.size)
                let reply = try await connection!.exchange(endpoint.publishRequest(topic: topic, body: body), deadline: deadline)
                let ackedAt = MonotonicClock.nanoseconds()
                if reply.closes {
                    connection?.close()
                    connection = nil
                }
                // 2xx: the gateway answers 200, Nchan 201 (delivered) or 202 (queued, no subscriber).
                guard (200...299).contains(reply.status) else {
                    let line = reply.body.prefix(120).prefix { $0 != 0x0A && $0 != 0x0D }
                    fail(&result, "publish: status \(reply.status): \(String(decoding: line, as: UTF8.self))")
                    continue
                }
                let parsed = PublishReply(body: reply.body)
                result.acked += 1
                result.expected += streaming
                if let parsed {
                    result.serverCounted += parsed.subscribers
                    if parsed.subscribers != streaming { result.countMismatches += 1 }
                } else {
                    result.repliesWithoutCount += 1
                }
                result.ackLatency.record(ackedAt - sent)
                result.note(TopicLatest(id: parsed?.numericID, tag: Payload(publisher: index, sequence: sequences[topic],
                                                                            sentNanos: sent).tag, ackedAt: ackedAt), topic: topic)
                stats.acked.add(1, ordering: .relaxed)
            } catch {
                connection?.close()
                connection = nil
                fail(&result, "publish: \(SubscriberClient.describe(error))")
                // A server that refuses connections must not turn this loop into a spin.
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        result.finishedAt = MonotonicClock.nanoseconds()
        return result
    }

    private func fail(_ result: inout PublisherResult, _ reason: String) {
        result.failed += 1
        if result.firstError == nil { result.firstError = reason }
        stats.noteError(reason)
    }
}
