import Locking

/// A stream that can be told to end with a last `retry:` (see `DrainableSource`).
protocol DrainableStream: AnyObject, Sendable {
    /// Send `retry: milliseconds` after whatever is pending, then end. Called at most once.
    func drain(retryMilliseconds: Int)
}

/// The gateway's open streams, for draining them on a stop, and whether the
/// gateway is still ready (`/readyz`).
///
/// Promises: a stream registered after `endAll` was called is drained at once on
/// registering (it cannot slip through); `drain` is called on each stream at most
/// once, never while this type's lock is held.
final class StreamDrain: Sendable {
    private struct State {
        var ready = true
        /// Set by `endAll`: the retry a late stream gets.
        var retryForLateStreams: (@Sendable () -> Int)?
        var nextToken = 0
        var streams: [Int: any DrainableStream] = [:]
    }

    private let state = Locked(State())

    /// False from the first stop request on.
    var isReady: Bool { state.withLock { $0.ready } }

    /// Open streams (for tests and the log).
    var count: Int { state.withLock { $0.streams.count } }

    /// `/readyz` answers `503` from now on.
    func markNotReady() {
        state.withLock { $0.ready = false }
    }

    /// Adds a stream; returns the token to remove it with, or nil when draining has
    /// already ended every stream (the stream was then drained here, at once).
    func register(_ stream: any DrainableStream) -> Int? {
        let outcome: (token: Int?, lateRetry: (@Sendable () -> Int)?) = state.withLock { state in
            if let retry = state.retryForLateStreams { return (nil, retry) }
            let token = state.nextToken
            state.nextToken += 1
            state.streams[token] = stream
            return (token, nil)
        }
        if let retry = outcome.lateRetry { stream.drain(retryMilliseconds: retry()) }
        return outcome.token
    }

    func remove(_ token: Int) {
        _ = state.withLock { $0.streams.removeValue(forKey: token) }
    }

    /// Ends every stream, each with the retry `retry()` draws, and every later one too.
    /// Returns how many were open.
    @discardableResult
    func endAll(retry: @escaping @Sendable () -> Int) -> Int {
        let streams = state.withLock { state in
            state.ready = false
            state.retryForLateStreams = retry
            let streams = Array(state.streams.values)
            state.streams.removeAll()
            return streams
        }
        for stream in streams { stream.drain(retryMilliseconds: retry()) }
        return streams.count
    }
}
