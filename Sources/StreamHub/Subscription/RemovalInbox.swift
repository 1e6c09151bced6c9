import Locking

/// Subscribers that finished on the consumer's side (cancel, task cancellation, deinit)
/// and still sit in the hub's tables. A finishing subscription posts its key here
/// synchronously; the hub drains the inbox at the start of every actor method, so
/// `snapshot()` right after `cancel()` is already exact, and one coalesced task per
/// burst drains it when no call comes.
///
/// Bound: each subscriber finishes once, so the inbox holds at most one key per
/// live subscriber.
final class RemovalInbox: Sendable {
    private struct State: Sendable {
        var keys: [SubscriberKey] = []
        /// A drain task has been started and has not taken the keys yet.
        var drainScheduled = false
    }

    private let state = Locked(State())

    /// Adds `key`; returns true when the caller must start a drain task.
    func post(_ key: SubscriberKey) -> Bool {
        state.withLock { state in
            state.keys.append(key)
            guard !state.drainScheduled else { return false }
            state.drainScheduled = true
            return true
        }
    }

    /// Takes every posted key; the next post schedules a new drain.
    func take() -> [SubscriberKey] {
        state.withLock { state in
            state.drainScheduled = false
            guard !state.keys.isEmpty else { return [] }
            defer { state.keys = [] }
            return state.keys
        }
    }
}
