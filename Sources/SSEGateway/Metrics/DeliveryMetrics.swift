import StreamHub

/// What subscribers' writes show operators: per channel, how long values waited
/// between the publish being accepted and their frame's write to the subscriber's
/// socket completing (`sse_gateway_delivery_latency_seconds`), and how many frames
/// each write carried (`sse_gateway_frames_per_write`).
///
/// Shared by every stream of the gateway (the fan-out records, `/metrics` reads):
/// recording is a handful of relaxed atomic adds, no lock, no allocation, so it stays
/// on in production (bench/histograms.md has the cost). Each value frame is observed
/// once, at the wait of the oldest value of its write: for the later values of a
/// batch that is an upper bound on their own wait. A wait starts when the value
/// was queued for the subscriber (`DeliveryRecorder`): in the publish, or, with
/// Redis, when the value reached this gateway.
final class DeliveryMetrics: Sendable {
    /// Latency bucket bounds, 100 µs to 10 s (`le`, in seconds once exposed).
    static let latencyBounds: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500),
        .milliseconds(1), .microseconds(2500), .milliseconds(5),
        .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10),
    ]
    /// Frames-per-write bucket bounds: powers of two up to 256.
    static let framesBounds: [UInt64] = [1, 2, 4, 8, 16, 32, 64, 128, 256]

    /// Latency in nanoseconds, one histogram per channel.
    private let stateLatency: AtomicHistogram
    private let eventsLatency: AtomicHistogram
    /// Frames per write, one histogram per channel.
    private let stateFrames: AtomicHistogram
    private let eventsFrames: AtomicHistogram

    init() {
        let nanoseconds = Self.latencyBounds.map(Self.nanoseconds)
        stateLatency = AtomicHistogram(bounds: nanoseconds, unitsPerExposed: 1e9)
        eventsLatency = AtomicHistogram(bounds: nanoseconds, unitsPerExposed: 1e9)
        stateFrames = AtomicHistogram(bounds: Self.framesBounds, unitsPerExposed: 1)
        eventsFrames = AtomicHistogram(bounds: Self.framesBounds, unitsPerExposed: 1)
    }

    /// One write to one subscriber's socket completed: `frames` frames went out
    /// (heartbeats included), `events` of them values (not heartbeats); the oldest
    /// value among them had been accepted `oldestWaited` before the write completed
    /// (nil when the write carried no value).
    ///
    /// The write is one observation of frames per write; its `events` values are
    /// `events` observations of latency, each of `oldestWaited`. A write of no frames
    /// records nothing; without `oldestWaited`, no latency is recorded.
    func recordWrite(channel: Channel, frames: Int, events: Int, oldestWaited: Duration?) {
        assert(frames >= 0 && (0...frames).contains(events), "a write of \(frames) frames with \(events) values")
        guard frames > 0 else { return }
        // Straight to the stored histograms (no tuple of references to retain and release).
        switch channel {
        case .state: stateFrames.record(UInt64(frames))
        case .events: eventsFrames.record(UInt64(frames))
        }
        guard events > 0, let waited = oldestWaited else { return }
        let nanoseconds = Self.nanoseconds(waited)
        switch channel {
        case .state: stateLatency.record(nanoseconds, count: UInt64(events))
        case .events: eventsLatency.record(nanoseconds, count: UInt64(events))
        }
    }

    /// The latency histogram of `channel`, in seconds.
    func latency(_ channel: Channel) -> HistogramSnapshot {
        channel == .state ? stateLatency.snapshot() : eventsLatency.snapshot()
    }

    /// The frames-per-write histogram of `channel`.
    func framesPerWrite(_ channel: Channel) -> HistogramSnapshot {
        channel == .state ? stateFrames.snapshot() : eventsFrames.snapshot()
    }

    /// `duration` in whole nanoseconds: a negative one is 0, one past 2^64 ns (584 years) saturates.
    static func nanoseconds(_ duration: Duration) -> UInt64 {
        // Below 2^64 attoseconds (18.4 s), a 64-bit division: `components` divides 128-bit integers.
        let attoseconds = duration.attoseconds
        if attoseconds <= 0 { return 0 }
        if attoseconds <= Int128(UInt64.max) { return UInt64(attoseconds) / 1_000_000_000 }
        let (seconds, remainder) = duration.components
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, carry) = whole.addingReportingOverflow(UInt64(remainder / 1_000_000_000))
        return carry ? .max : total
    }
}
