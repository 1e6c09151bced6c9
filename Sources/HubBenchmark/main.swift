import HTTPCore
// In-process micro-benchmark of the hub's publish path.
//
//   swift run -c release HubBenchmark [--quick]
//
// 1. Fan-out: for 1, 1,000 and 10,000 events subscribers on one topic, one publisher
//    task awaits `hub.publish` in a loop while every subscriber drains concurrently
//    with `nextBatch`. Reported: publish cost (wall time of the publish loop divided
//    by publishes), deliveries per second (frames received by all consumers / time
//    until the last has everything) and frames per batch. The queue limit is raised
//    so nobody overflows: this measures throughput, not the slow-subscriber policy.
//    The same topology also runs on a baseline with one AsyncStream per subscriber
//    (the alternative to the Mutex queue + nextBatch).
// 2. Sharding: 8 topics with one concurrent publisher each, all on one hub versus one
//    hub per topic (what sharding per topic would give).

import StreamHub

let payload = String(repeating: "x", count: 100)

struct Measurement {
    /// Wall time of the publish loop(s) / publishes.
    let microsPerPublish: Double
    let deliveriesPerSecond: Double
    /// Frames per nextBatch (AsyncStream: always 1).
    let framesPerBatch: Double
}

extension Duration {
    var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) * 1e-18
    }
}

/// Drains `sub` until `expected` frames arrived; returns the number of batches.
func drain(_ sub: Subscription, expected: Int) async -> Int {
    var received = 0, batches = 0
    while received < expected, let batch = await sub.nextBatch() {
        received += batch.count
        batches += 1
    }
    return batches
}

/// `topics` topics × `perTopic` subscribers, one publisher task per topic publishing
/// `publishes` events; topics on `hubCount` hubs (1, or one per topic).
func measureHub(topics: Int, perTopic: Int, publishes: Int, hubPerTopic: Bool = false) async throws -> Measurement {
    var configuration = HubConfiguration()
    configuration.eventsQueueLimit = max(1, publishes)
    // `--on-loop`: as in the gateway, the hub on the event loop's thread (and, below,
    // every publisher and consumer task preferring that loop).
    let executor: (any SerialExecutor)? = onLoop ? EventLoop.shared.actorExecutor : nil
    let hubs = (0..<(hubPerTopic ? topics : 1)).map { _ in Hub(configuration: configuration, executor: executor) }
    func hub(for topic: Int) -> Hub { hubs[hubPerTopic ? topic : 0] }
    var subs: [Subscription] = []
    subs.reserveCapacity(topics * perTopic)
    for topic in 0..<topics {
        for _ in 0..<perTopic {
            subs.append(await hub(for: topic).subscribe(topic: "t\(topic)", channel: .events))
        }
    }
    let clock = ContinuousClock()
    let start = clock.now
    enum Outcome: Sendable { case batches(Int), published(Duration) }
    var batches = 0
    var publishing = Duration.zero
    try await withThrowingTaskGroup(of: Outcome.self) { group in
        for sub in subs {
            group.addTask { .batches(await drain(sub, expected: publishes)) }
        }
        for topic in 0..<topics {
            let target = hub(for: topic)
            group.addTask {
                let begin = clock.now
                for index in 0..<publishes {
                    _ = try await target.publish(topic: "t\(topic)", channel: .events, data: payload,
                                                 event: index.isMultiple(of: 2) ? "a" : nil)
                }
                return .published(clock.now - begin)
            }
        }
        for try await outcome in group {
            switch outcome {
            case .batches(let count): batches += count
            case .published(let elapsed): publishing = max(publishing, elapsed)
            }
        }
    }
    let total = (clock.now - start).inSeconds
    let delivered = hubs.reduce(0) { $0 + Int($1.counters.framesDelivered(.events)) }
    precondition(delivered == topics * perTopic * publishes, "lost frames: \(delivered)")
    precondition(hubs.allSatisfy { $0.counters.slowSubscriberDisconnects == 0 })
    for hub in hubs { await hub.shutdown() }
    return Measurement(microsPerPublish: publishing.inSeconds * 1e6 / Double(topics * publishes),
                       deliveriesPerSecond: Double(delivered) / total,
                       framesPerBatch: batches == 0 ? 0 : Double(delivered) / Double(batches))
}

/// Baseline: the same fan-out through one AsyncStream per subscriber
/// (`.bufferingOldest(limit)`, one element per await on the consumer side).
actor StreamFanOut {
    private var continuations: [AsyncStream<[UInt8]>.Continuation] = []
    private var lastID: UInt64 = 0

    func subscribe(limit: Int) -> AsyncStream<[UInt8]> {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self, bufferingPolicy: .bufferingOldest(limit))
        continuations.append(continuation)
        return stream
    }

    func publish(data: String) -> Int {
        lastID += 1
        let frame = SSEEncoder.event(id: lastID, event: nil, data: data)
        var queued = 0
        for continuation in continuations {
            if case .enqueued = continuation.yield(frame) { queued += 1 }
        }
        return queued
    }
}

func measureAsyncStream(subscribers: Int, publishes: Int) async -> Measurement {
    let fanOut = StreamFanOut()
    var streams: [AsyncStream<[UInt8]>] = []
    for _ in 0..<subscribers {
        streams.append(await fanOut.subscribe(limit: publishes))
    }
    let clock = ContinuousClock()
    let start = clock.now
    enum Outcome: Sendable { case received(Int), published(Duration) }
    var delivered = 0
    var publishing = Duration.zero
    await withTaskGroup(of: Outcome.self) { group in
        for stream in streams {
            group.addTask {
                var received = 0
                for await _ in stream {
                    received += 1
                    if received == publishes { break }
                }
                return .received(received)
            }
        }
        group.addTask {
            let begin = clock.now
            for _ in 0..<publishes { _ = await fanOut.publish(data: payload) }
            return .published(clock.now - begin)
        }
        for await outcome in group {
            switch outcome {
            case .received(let count): delivered += count
            case .published(let elapsed): publishing = elapsed
            }
        }
    }
    let total = (clock.now - start).inSeconds
    precondition(delivered == subscribers * publishes, "lost frames: \(delivered)")
    return Measurement(microsPerPublish: publishing.inSeconds * 1e6 / Double(publishes),
                       deliveriesPerSecond: Double(delivered) / total, framesPerBatch: 1)
}

func format(_ value: Double, decimals: Int) -> String {
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let rounded = (value * scale).rounded() / scale
    return decimals == 0 ? "\(Int(rounded))" : "\(rounded)"
}

func pad(_ text: String, _ width: Int) -> String {
    text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
}

func row(_ columns: [(String, Int)]) {
    print(columns.map { pad($0.0, $0.1) }.joined(separator: " "))
}

func report(_ name: String, _ scenario: String, _ m: Measurement) {
    row([(name, 14), (scenario, 22), (format(m.microsPerPublish, decimals: 2), 11),
         (format(m.deliveriesPerSecond, decimals: 0), 13), (format(m.framesPerBatch, decimals: 1), 13)])
}

let quick = CommandLine.arguments.contains("--quick")
let onLoop = CommandLine.arguments.contains("--on-loop")
let scale = quick ? 10 : 1

try await withTaskExecutorPreference(onLoop ? EventLoop.shared : nil) {
    try await runAll()
}

func runAll() async throws {
    print("hub-bench: events channel, \(payload.utf8.count)-byte payload, consumers draining concurrently"
          + (onLoop ? "; hub and tasks on the event loop's thread (as in the gateway)" : "; hub on its own serial queue"))
    row([("impl", 14), ("scenario", 22), ("µs/publish", 11), ("deliveries/s", 13), ("frames/batch", 13)])
    for (subscribers, publishes) in [(1, 200_000), (1_000, 2_000), (10_000, 200)] {
        let count = publishes / scale
        _ = try await measureHub(topics: 1, perTopic: subscribers, publishes: max(1, count / 10))  // Warm-up.
        let scenario = "1 topic × \(subscribers) subs"
        report("hub", scenario, try await measureHub(topics: 1, perTopic: subscribers, publishes: count))
        report("asyncstream", scenario, await measureAsyncStream(subscribers: subscribers, publishes: count))
    }

    print("")
    print("sharding: 8 topics, one concurrent publisher per topic (µs/publish = publish wall time / all publishes)")
    for (perTopic, publishes) in [(0, 20_000), (100, 1_000)] {
        let count = publishes / scale
        let scenario = "8 topics × \(perTopic) subs"
        report("one hub", scenario, try await measureHub(topics: 8, perTopic: perTopic, publishes: count))
        report("hub per topic", scenario, try await measureHub(topics: 8, perTopic: perTopic, publishes: count, hubPerTopic: true))
    }
}
