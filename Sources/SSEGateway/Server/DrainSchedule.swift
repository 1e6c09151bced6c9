/// What a stop request does, in order (API.md "Operating it"): `/readyz` turns
/// `503` at once; streams go on for `delay` (so a load balancer stops sending new
/// clients); then every stream is sent a `retry:` drawn at random from `0...spread`
/// and ended, so EventSources come back spread over that window; then the server
/// shuts down as before (`--shutdown-grace`).
///
/// A pure lifecycle: no clock, no tasks. The gateway feeds it events and does
/// what the returned action says; the tests drive it turn by turn. A second stop
/// request while waiting out the delay (an impatient operator's second Ctrl-C)
/// skips the rest of the delay.
struct DrainSchedule: Sendable, Equatable {
    enum Phase: Sendable, Equatable {
        /// Serving; ready.
        case serving
        /// Not ready; streams go on until the delay's timer fires.
        case delaying
        /// Every stream was told its `retry:` and ended; the shutdown proper follows.
        case ended
    }

    enum Event: Sendable, Equatable {
        /// SIGTERM, SIGINT or `stop()`.
        case stopRequested
        /// The delay's timer (started by `.notReady(wait:)`) fired.
        case delayElapsed
    }

    enum Action: Sendable, Equatable {
        /// Nothing to do.
        case none
        /// Turn `/readyz` to `503` now, and fire `.delayElapsed` after this long.
        case notReady(wait: Duration)
        /// Turn `/readyz` to `503` (if not already), send every stream its spread
        /// `retry:` and end it, then shut down.
        case endStreams
    }

    let delay: Duration
    let spread: Duration
    private(set) var phase: Phase = .serving

    init(delay: Duration, spread: Duration) {
        precondition(delay >= .zero && spread >= .zero, "drain durations must not be negative")
        self.delay = delay
        self.spread = spread
    }

    mutating func handle(_ event: Event) -> Action {
        switch (phase, event) {
        case (.serving, .stopRequested):
            if delay == .zero {
                phase = .ended
                return .endStreams
            }
            phase = .delaying
            return .notReady(wait: delay)
        case (.delaying, .stopRequested), (.delaying, .delayElapsed):
            phase = .ended
            return .endStreams
        case (.serving, .delayElapsed), (.ended, _):
            return .none
        }
    }

    /// The `retry:` one stream is sent: uniform over `0...spread`, in milliseconds.
    func retryMilliseconds(using random: inout some RandomNumberGenerator) -> Int {
        let window = Int(spread.components.seconds) * 1000 + Int(spread.components.attoseconds / 1_000_000_000_000_000)
        return window == 0 ? 0 : Int.random(in: 0...window, using: &random)
    }
}
