import HTTPCore
/// One load run, from the first connect to the report, in four phases:
///
/// 1. connect: subscriber j starts at `ramp × j / subscribers`; the phase
///    ends when every subscriber has its head or has failed (each within the
///    connect timeout), so every publish finds its subscribers in place;
/// 2. publish: the publishers run for the duration (or up to `--publishes`);
///    with no publishers the subscribers are held for the duration instead
///    (or until every stream has ended);
/// 3. settle: wait, at most `settle`, until every streaming subscriber has
///    its topic's newest publish (and, on `/events`, every owed delivery came);
/// 4. stop: mark the run as stopping, cancel the subscriber tasks (each closes
///    its connection) and build the report.
///
/// The engine is a library call, so tests run it against an in-process gateway;
/// `main.swift` only parses the command line and prints the report.
struct LoadRun: Sendable {
    let plan: RunPlan

    init(configuration: LoadConfiguration) throws(LoadSetupError) {
        plan = try RunPlan(configuration: configuration)
    }

    /// Runs the load; `showProgress` redraws a progress line on standard output once a second.
    /// Every subscriber and publisher runs on the event loop's thread, where its
    /// socket's readiness arrives (no thread hop per read, like the gateway's
    /// connections): one core's worth of load, which is what the benchmarks pin it to.
    func run(showProgress: Bool = false) async -> LoadReport {
        await withTaskExecutorPreference(EventLoop.shared) { await runPhases(showProgress: showProgress) }
    }

    private func runPhases(showProgress: Bool) async -> LoadReport {
        let configuration = plan.configuration
        let stats = LoadStats(topics: configuration.topics, targets: configuration.targets.count)
        let probes = (0..<configuration.subscribers).map { SubscriberProbe(topic: configuration.topic(ofSubscriber: $0)) }
        var timeline = Timeline(startNanos: MonotonicClock.nanoseconds())
        let start = ContinuousClock.now
        let progress = showProgress ? ProgressLine.start(stats: stats, subscribers: configuration.subscribers) : nil

        let published = await withTaskGroup(of: Void.self, returning: PublisherResult.self) { group in
            for index in probes.indices {
                let client = SubscriberClient(index: index, plan: plan, stats: stats, probe: probes[index])
                let offset = configuration.ramp * (Double(index) / Double(probes.count))
                group.addTask { await client.run(startingAt: start + offset) }
            }
            await waitForConnects(stats, total: probes.count)
            timeline.publishStartNanos = MonotonicClock.nanoseconds()
            let published = await publish(stats)
            timeline.publishEndNanos = MonotonicClock.nanoseconds()
            stats.publishingEnded.store(true, ordering: .sequentiallyConsistent)
            await settle(stats, probes: probes, published: published)
            stats.stopping.store(true, ordering: .sequentiallyConsistent)
            group.cancelAll()
            return published
        }
        timeline.endNanos = MonotonicClock.nanoseconds()
        if let progress {
            progress.cancel()
            await progress.value
        }
        let notOnLatest = Self.notOnLatest(probes, published.latest)
        return LoadReport(configuration: configuration, stats: stats, published: published,
                          notOnLatest: notOnLatest, timeline: timeline)
    }

    /// Returns once every subscriber is streaming or has failed.
    private func waitForConnects(_ stats: LoadStats, total: Int) async {
        while stats.connected.load(ordering: .relaxed) + stats.connectFailed.load(ordering: .relaxed) < total {
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Runs the publishers to the end of the duration (or holds, with none).
    private func publish(_ stats: LoadStats) async -> PublisherResult {
        let configuration = plan.configuration
        let start = ContinuousClock.now
        let end = start + configuration.duration
        guard configuration.publishers > 0 else {
            // Hold the subscribers, unless none is left to hold.
            while ContinuousClock.now < end && stats.streaming > 0 {
                try? await Task.sleep(for: min(.milliseconds(50), end - ContinuousClock.now))
            }
            return PublisherResult(topics: configuration.topics)
        }
        return await withTaskGroup(of: PublisherResult.self, returning: PublisherResult.self) { group in
            let perPublisher = configuration.rate / Double(configuration.publishers)
            for index in 0..<configuration.publishers {
                // Publishers take turns: publisher p starts p/rate after publisher 0.
                let offset: Duration = configuration.rate > 0 ? .seconds(Double(index) / configuration.rate) : .zero
                let pacer = Pacer(start: start + offset, end: end, rate: perPublisher)
                let client = PublisherClient(index: index, plan: plan, stats: stats)
                group.addTask { await client.run(pacer: pacer, quota: configuration.quota(ofPublisher: index)) }
            }
            var merged = PublisherResult(topics: configuration.topics)
            for await result in group { merged.merge(result) }
            return merged
        }
    }

    /// Waits at most `settle` for deliveries still in flight.
    private func settle(_ stats: LoadStats, probes: [SubscriberProbe], published: PublisherResult) async {
        let configuration = plan.configuration
        let end = ContinuousClock.now + configuration.settle
        while ContinuousClock.now < end {
            let unique = stats.received.load(ordering: .relaxed) - stats.duplicates.load(ordering: .relaxed)
            let allOwed = configuration.channel == .state || unique >= published.expected
            if allOwed && Self.notOnLatest(probes, published.latest) == 0 { return }
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Streaming subscribers whose last delivery is not their topic's newest publish.
    static func notOnLatest(_ probes: [SubscriberProbe], _ latest: [TopicLatest?]) -> Int {
        var count = 0
        for probe in probes where probe.phase == .streaming {
            if let newest = latest[probe.topic], probe.lastTag.load(ordering: .relaxed) != newest.tag { count += 1 }
        }
        return count
    }
}

/// When the phases of a run began and ended, in monotonic nanoseconds.
struct Timeline: Sendable {
    var startNanos: UInt64
    var publishStartNanos: UInt64 = 0
    var publishEndNanos: UInt64 = 0
    var endNanos: UInt64 = 0
}
