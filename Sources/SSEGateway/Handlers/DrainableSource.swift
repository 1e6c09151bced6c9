import HTTPCore
import Locking
import StreamHub

/// A subscriber's stream source that a drain can end (`StreamDrain`): until then
/// it hands over exactly what the wrapped source does; once drained, its next take
/// is what the wrapped source had pending followed by `retry: <ms>`, and the take
/// after that finishes the stream (the wrapped subscription is cancelled: it
/// leaves the hub). The client reconnects after that `retry:`.
///
/// Lifecycle: `streaming` ──drain──► `draining` ──take──► `finished`; the pump's
/// `cancel` (the client left first) also goes to `finished`.
final class DrainableSource: StreamSource, DrainableStream {
    private enum State {
        /// The pump's wake-up, kept so a drain can call it.
        case streaming(ready: (@Sendable () -> Void)?)
        case draining(retry: [UInt8])
        case finished
    }

    private let inner: any StreamSource
    private let registry: StreamDrain
    private let state = Locked(State.streaming(ready: nil))
    private let token = Locked<Int?>(nil)

    init(_ inner: any StreamSource, registry: StreamDrain) {
        self.inner = inner
        self.registry = registry
    }

    /// Joins the registry (after `init`, so a drain that already happened reaches a whole object).
    func register() {
        let token = registry.register(self)
        self.token.withLock { $0 = token }
    }

    func take(orNotify ready: @escaping @Sendable () -> Void) -> StreamTake {
        enum Step { case pass, drain([UInt8]), finished }
        let step: Step = state.withLock { state in
            switch state {
            case .streaming:
                state = .streaming(ready: ready)
                return .pass
            case .draining(let retry):
                state = .finished
                return .drain(retry)
            case .finished:
                return .finished
            }
        }
        switch step {
        case .pass:
            return inner.take(orNotify: ready)
        case .finished:
            return .finished
        case .drain(let retry):
            let last = inner.take(orNotify: {})
            inner.cancel()
            leaveRegistry()
            guard case .batch(var batch) = last else {
                return .batch(StreamBatch(chunks: [retry], frames: 1, values: 0, oldestValueAt: nil))
            }
            batch.chunks.append(retry)
            batch.frames += 1
            return .batch(batch)
        }
    }

    func written(_ batch: StreamBatch, at time: ContinuousClock.Instant) {
        inner.written(batch, at: time)
    }

    func cancel() {
        let wasFinished = state.withLock { state in
            if case .finished = state { return true }
            state = .finished
            return false
        }
        leaveRegistry()
        if !wasFinished { inner.cancel() }
    }

    func drain(retryMilliseconds: Int) {
        let ready: (@Sendable () -> Void)? = state.withLock { state in
            guard case .streaming(let ready) = state else { return nil }
            state = .draining(retry: SSEEncoder.retry(milliseconds: retryMilliseconds))
            return ready
        }
        ready?()
    }

    private func leaveRegistry() {
        if let token = token.withLock({ token in defer { token = nil }; return token }) {
            registry.remove(token)
        }
    }
}
