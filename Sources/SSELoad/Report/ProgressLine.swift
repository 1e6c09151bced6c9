import GatewayAPI
import HTTPCore

/// The live progress line on a terminal: once a second, redrawn in place with
/// `\r`, the subscribers connected so far, deliveries per second over the last
/// second, publishes acked and the p99 latency so far. Erased when the run ends,
/// so the report starts on a clean line. Only started when standard output is
/// a terminal (`isatty(1)`); written with `write(2)`, never buffered.
enum ProgressLine {
    static func start(stats: LoadStats, subscribers: Int) -> Task<Void, Never> {
        Task {
            var lastReceived = 0
            var lastTick = ContinuousClock.now
            defer { draw("\r\u{1B}[K") }
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(1)) } catch { return }
                let now = ContinuousClock.now
                let received = stats.received.load(ordering: .relaxed)
                let perSecond = Double(received - lastReceived) / DurationText.seconds(now - lastTick)
                lastReceived = received
                lastTick = now
                let p99 = LoadReport.milliseconds(stats.latencies(), 99)
                var line = "\rconnected \(stats.connected.load(ordering: .relaxed))/\(subscribers)"
                let failed = stats.connectFailed.load(ordering: .relaxed)
                if failed > 0 { line += " (\(failed) failed)" }
                line += "  published \(stats.acked.load(ordering: .relaxed))"
                line += "  events/s \(Int(perSecond.rounded()))"
                line += "  p99 \(LoadReport.ms(p99)) ms"
                draw(line + "\u{1B}[K")
            }
        }
    }

    /// Whether standard output is a terminal.
    static var isTerminal: Bool { StandardStreams.outputIsTerminal }

    private static func draw(_ text: String) {
        StandardStreams.writeOutput(text)
    }
}

/// Messages for standard error, one line each.
enum StandardError {
    static func write(_ line: String) {
        StandardStreams.writeError(line + "\n")
    }
}
