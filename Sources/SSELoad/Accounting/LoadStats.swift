import Locking
import Synchronization

/// The counters every subscriber task adds to, readable at any time by the
/// progress line and the coordinator. Subscribers commit once per read (not
/// per event); latencies go to one of `shardCount` histograms chosen by
/// subscriber, so two threads rarely wait on one lock.
final class LoadStats: Sendable {
    /// Subscribers whose response head (status 200) arrived.
    let connected = Atomic<Int>(0)
    /// Subscribers that could not connect or got another status.
    let connectFailed = Atomic<Int>(0)
    /// Streams that ended (EOF, reset, end of body) before the run was stopping.
    let endedEarly = Atomic<Int>(0)
    /// Deliveries of our payloads, duplicates included.
    let received = Atomic<Int>(0)
    let duplicates = Atomic<Int>(0)
    let outOfOrder = Atomic<Int>(0)
    let unrecognized = Atomic<Int>(0)
    /// Publishes acked so far (for the progress line).
    let acked = Atomic<Int>(0)
    /// Monotonic nanoseconds of the first and last connect success, and of the last delivery.
    let firstConnectNanos = Atomic<UInt64>(UInt64.max)
    let lastConnectNanos = Atomic<UInt64>(0)
    let lastDeliveryNanos = Atomic<UInt64>(0)
    /// Set when the run is ending: streams closing from now on are not "early".
    let stopping = Atomic<Bool>(false)
    /// Set when the publishers have stopped (stalled subscribers read again from then on).
    let publishingEnded = Atomic<Bool>(false)

    private static let shardCount = 16
    private let latencyShards: [HistogramBox]
    private let connectLatency = HistogramBox()
    private let firstError = Locked<String?>(nil)
    /// Per topic, subscribers streaming now as this process knows them: counted
    /// up when a `200` head arrives, down when the stream ends while the run goes
    /// on. Publishers read it when they send, to know how many deliveries they owe.
    private let topicStreaming: [CounterBox]

    /// Per URL (`--url`, in order), subscribers whose head arrived from it.
    private let targetConnected: [CounterBox]

    init(topics: Int = 1, targets: Int = 1) {
        latencyShards = (0..<Self.shardCount).map { _ in HistogramBox() }
        topicStreaming = (0..<max(1, topics)).map { _ in CounterBox() }
        targetConnected = (0..<max(1, targets)).map { _ in CounterBox() }
    }

    /// A subscriber of URL `target` got its head.
    func connectedTo(target: Int) {
        targetConnected[target].value.add(1, ordering: .relaxed)
    }

    /// Per URL, subscribers whose head arrived from it.
    var connectedPerTarget: [Int] { targetConnected.map { $0.value.load(ordering: .relaxed) } }

    /// A subscriber of `topic` started streaming.
    func streamingStarted(topic: Int) {
        topicStreaming[topic].value.add(1, ordering: .sequentiallyConsistent)
    }

    /// A subscriber of `topic` stopped streaming while the run went on.
    func streamingEnded(topic: Int) {
        topicStreaming[topic].value.subtract(1, ordering: .sequentiallyConsistent)
    }

    /// Subscribers of `topic` streaming now.
    func streaming(topic: Int) -> Int {
        topicStreaming[topic].value.load(ordering: .sequentiallyConsistent)
    }

    /// Subscribers connected whose stream has not ended.
    var streaming: Int { connected.load(ordering: .relaxed) - endedEarly.load(ordering: .relaxed) }

    /// Adds a subscriber's batch and empties it for the next read.
    func commit(_ batch: inout DeliveryBatch, subscriber: Int, at now: UInt64) {
        guard !batch.isEmpty else { return }
        if batch.received > 0 {
            received.add(batch.received, ordering: .relaxed)
            lastDeliveryNanos.max(now, ordering: .relaxed)
        }
        if batch.duplicates > 0 { duplicates.add(batch.duplicates, ordering: .relaxed) }
        if batch.outOfOrder > 0 { outOfOrder.add(batch.outOfOrder, ordering: .relaxed) }
        if batch.unrecognized > 0 { unrecognized.add(batch.unrecognized, ordering: .relaxed) }
        if !batch.latencies.isEmpty {
            latencyShards[subscriber % Self.shardCount].histogram.withLock { histogram in
                for latency in batch.latencies { histogram.record(latency) }
            }
        }
        batch.reset()
    }

    /// Counts a subscriber whose head arrived `nanoseconds` after it began connecting.
    func connectSucceeded(after nanoseconds: UInt64, at now: UInt64) {
        connectLatency.histogram.withLock { $0.record(nanoseconds) }
        firstConnectNanos.min(now, ordering: .relaxed)
        lastConnectNanos.max(now, ordering: .relaxed)
        connected.add(1, ordering: .relaxed)
    }

    func connectFailed(_ reason: String) {
        noteError(reason)
        connectFailed.add(1, ordering: .relaxed)
    }

    /// Keeps the first error of the run, for the report.
    func noteError(_ reason: String) {
        firstError.withLock { if $0 == nil { $0 = reason } }
    }

    var error: String? { firstError.withLock { $0 } }

    /// Every delivery latency so far, merged.
    func latencies() -> LatencyHistogram {
        var merged = LatencyHistogram()
        for shard in latencyShards {
            shard.histogram.withLock { merged.merge($0) }
        }
        return merged
    }

    /// Connect latencies (start of connect to response head).
    func connectLatencies() -> LatencyHistogram { connectLatency.histogram.withLock { $0 } }
}

/// A counter that can be an array element (an `Atomic` cannot).
final class CounterBox: Sendable {
    let value = Atomic<Int>(0)
}

/// A histogram behind its own lock (a `Locked` cannot be an array element).
final class HistogramBox: Sendable {
    let histogram = Locked(LatencyHistogram())
}
