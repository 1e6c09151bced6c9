import HTTPCore
import Locking

/// A `StreamSource` a test drives, for streaming responses over real sockets: `send`
/// queues bytes, `finish` ends the stream; `taken` fires when the server first reads
/// it, `cancelled` when the server cancels it (the client left, a `HEAD`).
final class TestSource: StreamSource {
    private struct State {
        var chunks: [[UInt8]] = []
        var finished = false
        var ready: (@Sendable () -> Void)?
        var cancelled = false
        var cancelledAt: ContinuousClock.Instant?
    }

    private let state = Locked(State())
    let taken = Signal()
    let cancelled = Signal()

    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// When the server cancelled it (its own time, not when a waiting test got to run).
    var cancelledAt: ContinuousClock.Instant? { state.withLock { $0.cancelledAt } }

    /// The body of a response streaming this source.
    var body: HTTPResponse.Body { .source(SourcedBody(prelude: [], source: self)) }

    func send(_ text: String) {
        state.withLock { state -> (@Sendable () -> Void)? in
            state.chunks.append(Array(text.utf8))
            return state.ready.take()
        }?()
    }

    func finish() {
        state.withLock { state -> (@Sendable () -> Void)? in
            state.finished = true
            return state.ready.take()
        }?()
    }

    func take(orNotify ready: @escaping @Sendable () -> Void) -> StreamTake {
        taken.fire()
        return state.withLock { state in
            if !state.chunks.isEmpty {
                defer { state.chunks = [] }
                return .batch(StreamBatch(chunks: state.chunks, frames: state.chunks.count,
                                          values: state.chunks.count, oldestValueAt: nil))
            }
            if state.finished { return .finished }
            state.ready = ready
            return .pending
        }
    }

    func written(_ batch: StreamBatch, at time: ContinuousClock.Instant) {}

    /// Lets go of the pump's `ready` callback (which holds the pump, which holds this
    /// source: kept, the two would never be freed), as `StreamSource.cancel` asks.
    func cancel() {
        let now = ContinuousClock.now
        state.withLock {
            $0.cancelled = true
            $0.cancelledAt = $0.cancelledAt ?? now
            $0.ready = nil
        }
        cancelled.fire()
    }
}
