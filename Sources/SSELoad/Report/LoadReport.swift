import HTTPCore
import StreamHub

/// The outcome of a run, every figure final: what `--json` prints as one line
/// and the summary prints for people. Built once, from the run's counters.
///
/// Definitions: `eventsReceived` counts deliveries of this run's payloads,
/// duplicates included; `expectedDeliveries` is the sum, over acked publishes,
/// of the subscribers of the publish's topic that were streaming when it was
/// sent, as this process knows them (connected with a `200` head, stream not
/// ended) — not the server's own count, which is kept beside it
/// (`serverCountedDeliveries`) with the number of replies that disagreed;
/// `loss` is expected − (received − duplicates), not below 0, and nil on
/// `/state`, where a slow reader skips superseded values by design.
struct LoadReport: Sendable {
    var configuration: LoadConfiguration
    var connectionsEstablished: Int
    var connectionsFailed: Int
    /// Per URL (`--url`, in order), subscribers that connected to it.
    var connectionsPerURL: [Int]
    /// From the run's start to the last successful connect (the ramp included).
    var connectSeconds: Double?
    var connectLatency: LatencyHistogram
    var publishesAttempted: Int
    var publishesAcked: Int
    var publishesFailed: Int
    /// From the start of publishing to the last publisher stopping.
    var publishSeconds: Double
    var publishLatency: LatencyHistogram
    var eventsReceived: Int
    var unrecognizedEvents: Int
    var expectedDeliveries: Int
    /// Σ of the subscriber counts in the server's replies; nil when a reply had none.
    var serverCountedDeliveries: Int?
    /// Acked publishes whose reply's subscriber count differed from this process's.
    var subscriberCountMismatches: Int
    var duplicates: Int
    var outOfOrder: Int
    /// Subscriber streams that ended while the run went on (slow-subscriber
    /// disconnects, or the server going away).
    var endedEarly: Int
    /// Streaming subscribers whose last delivery was not their topic's newest publish.
    var notOnLatest: Int
    var latency: LatencyHistogram
    /// From the start of publishing to the last delivery.
    var deliverySeconds: Double
    var elapsedSeconds: Double
    /// CPU time (user + system) this process used: near `elapsedSeconds` × cores
    /// means the load tool, not the server, was the bottleneck.
    var loadCPUSeconds: Double
    var firstError: String?

    init(configuration: LoadConfiguration, stats: LoadStats, published: PublisherResult,
         notOnLatest: Int, timeline: Timeline) {
        self.configuration = configuration
        func seconds(_ from: UInt64, _ to: UInt64) -> Double { to > from ? Double(to - from) / 1e9 : 0 }
        connectionsEstablished = stats.connected.load(ordering: .relaxed)
        connectionsFailed = stats.connectFailed.load(ordering: .relaxed)
        connectionsPerURL = stats.connectedPerTarget
        let lastConnect = stats.lastConnectNanos.load(ordering: .relaxed)
        connectSeconds = lastConnect == 0 ? nil : seconds(timeline.startNanos, lastConnect)
        connectLatency = stats.connectLatencies()
        publishesAttempted = published.attempted
        publishesAcked = published.acked
        publishesFailed = published.failed
        publishSeconds = seconds(timeline.publishStartNanos, max(published.finishedAt, timeline.publishStartNanos))
        publishLatency = published.ackLatency
        eventsReceived = stats.received.load(ordering: .relaxed)
        unrecognizedEvents = stats.unrecognized.load(ordering: .relaxed)
        expectedDeliveries = published.expected
        serverCountedDeliveries = published.repliesWithoutCount == 0 ? published.serverCounted : nil
        subscriberCountMismatches = published.countMismatches
        duplicates = stats.duplicates.load(ordering: .relaxed)
        outOfOrder = stats.outOfOrder.load(ordering: .relaxed)
        endedEarly = stats.endedEarly.load(ordering: .relaxed)
        self.notOnLatest = notOnLatest
        latency = stats.latencies()
        deliverySeconds = seconds(timeline.publishStartNanos, stats.lastDeliveryNanos.load(ordering: .relaxed))
        elapsedSeconds = seconds(timeline.startNanos, timeline.endNanos)
        loadCPUSeconds = ProcessCPU.seconds()
        firstError = stats.error ?? published.firstError
    }

    /// Deliveries counted once each.
    var uniqueDeliveries: Int { eventsReceived - duplicates }

    var loss: Int? {
        configuration.channel == .state ? nil : max(0, expectedDeliveries - uniqueDeliveries)
    }

    var deliveriesPerSecond: Double { deliverySeconds > 0 ? Double(uniqueDeliveries) / deliverySeconds : 0 }

    var achievedPublishRate: Double { publishSeconds > 0 ? Double(publishesAcked) / publishSeconds : 0 }

    /// A percentile of a histogram in milliseconds; nil when it is empty.
    static func milliseconds(_ histogram: LatencyHistogram, _ percentile: Double) -> Double? {
        histogram.value(atPercentile: percentile).map { Double($0) / 1e6 }
    }

    static func maxMilliseconds(_ histogram: LatencyHistogram) -> Double? {
        histogram.isEmpty ? nil : Double(histogram.max) / 1e6
    }
}
