import HTTPCore

/// One SSE subscriber, run as one task: waits for its start time, connects,
/// sends its `GET`, waits for a `200` head (all within the connect timeout),
/// then reads and accounts events until the task is cancelled or the stream
/// ends. Reports to `LoadStats` once per read and shows itself in its probe.
/// Owns its connection and closes it on every way out.
struct SubscriberClient: Sendable {
    let index: Int
    let plan: RunPlan
    let stats: LoadStats
    let probe: SubscriberProbe

    /// Bytes asked of one read: many events at high rates, one allocation.
    private static let readSize = 16 * 1024

    func run(startingAt start: ContinuousClock.Instant) async {
        do {
            try await Task.sleep(until: start, clock: .continuous)
        } catch {
            return fail("cancelled before connecting")
        }
        let configuration = plan.configuration
        let endpoint = plan.endpoint(ofSubscriber: index)
        let began = MonotonicClock.nanoseconds()
        let deadline = ContinuousClock.now + configuration.connectTimeout
        let connection: Connection
        do {
            connection = try await Connection.connect(to: endpoint.address, deadline: deadline)
        } catch {
            return fail("connect: \(Self.describe(error))")
        }
        defer { connection.close() }
        var stream = SubscriberStream(channel: configuration.channel, publishers: configuration.publishers)
        var batch = DeliveryBatch()
        do {
            try await connection.write(endpoint.subscribeRequests[probe.topic], deadline: deadline)
            while stream.status == nil {
                let bytes = try await connection.read(maxBytes: Self.readSize, deadline: deadline)
                guard !bytes.isEmpty else { return fail("connection closed before the response head") }
                try stream.feed(bytes, receivedAt: MonotonicClock.nanoseconds(), into: &batch)
            }
        } catch {
            return fail("subscribe: \(Self.describe(error))")
        }
        guard stream.status == 200, let headAt = stream.headReceivedAt else {
            return fail("subscribe: status \(stream.status ?? 0)")
        }
        stats.streamingStarted(topic: probe.topic)
        stats.connectedTo(target: configuration.target(ofSubscriber: index))
        stats.connectSucceeded(after: headAt - began, at: headAt)
        probe.enter(.streaming)
        await readEvents(&stream, batch: &batch, on: connection, firstAt: headAt)
    }

    /// Reads until cancelled (the run is over) or the stream ends (early).
    private func readEvents(_ stream: inout SubscriberStream, batch: inout DeliveryBatch,
                            on connection: Connection, firstAt: UInt64) async {
        let stallAfter = plan.configuration.stallAfter
        var delivered = batch.received
        record(&batch, at: firstAt)
        do {
            while !stream.ended {
                if let stallAfter, delivered >= stallAfter, !stats.publishingEnded.load(ordering: .relaxed) {
                    // A stalled reader: read nothing until publishing ends, so the server's writes back up.
                    try await Task.sleep(for: .milliseconds(10))
                    continue
                }
                let bytes = try await connection.read(maxBytes: Self.readSize)
                let now = MonotonicClock.nanoseconds()
                if bytes.isEmpty { break }
                try stream.feed(bytes, receivedAt: now, into: &batch)
                delivered += batch.received
                record(&batch, at: now)
            }
        } catch is CancellationError {
            return
        } catch {
            if !stats.stopping.load(ordering: .relaxed) { stats.noteError("subscriber stream: \(Self.describe(error))") }
        }
        if !stats.stopping.load(ordering: .relaxed) && !Task.isCancelled {
            stats.streamingEnded(topic: probe.topic)
            probe.enter(.ended)
            stats.endedEarly.add(1, ordering: .relaxed)
        }
    }

    private func record(_ batch: inout DeliveryBatch, at now: UInt64) {
        if batch.lastTag != 0 { probe.lastTag.store(batch.lastTag, ordering: .relaxed) }
        stats.commit(&batch, subscriber: index, at: now)
    }

    private func fail(_ reason: String) {
        probe.enter(.failed)
        stats.connectFailed(reason)
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case IOWaitError.timedOut: "timed out"
        case IOWaitError.closed: "connection closed"
        default: "\(error)"
        }
    }
}
