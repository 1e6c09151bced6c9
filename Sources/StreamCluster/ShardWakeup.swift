import Locking

/// What a shard's supervision waits on besides its clock: a nudge given when
/// something it watches may have changed (a new master named, a connection of its
/// link closed, the engine shutting down). The waiter looks at the engine's state
/// again after every nudge: the nudge carries no meaning of its own.
///
/// Promises: a `signal()` while nobody waits is kept, and ends the next `wait()` at
/// once (no nudge is lost between two looks); `wait()` also ends when its task is
/// cancelled. Continuations are resumed outside the lock, each exactly once.
final class ShardWakeup: Sendable {
    private struct State {
        var signalled = false
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var lastID: UInt64 = 0
    }

    private let state = Locked(State())

    /// Ends every wait under way, or the next one if none is.
    func signal() {
        let woken: [CheckedContinuation<Void, Never>] = state.withLock {
            guard !$0.waiters.isEmpty else {
                $0.signalled = true
                return []
            }
            let all = Array($0.waiters.values)
            $0.waiters = [:]
            return all
        }
        for waiter in woken { waiter.resume() }
    }

    /// Returns after a signal (one given since the last wait ended counts) or the task's cancellation.
    func wait() async {
        let id = state.withLock {
            $0.lastID += 1
            return $0.lastID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock {
                    if $0.signalled || Task.isCancelled {
                        $0.signalled = false
                        return true
                    }
                    $0.waiters[id] = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
    }
}

/// What a shard's supervision waits for, besides its deadline.
enum ShardWait: Sendable {
    /// A new master named (`relinkRequested`) or the engine shut down: a back-off or a connect attempt ends.
    case relink
    /// The link of this generation is no longer the shard's open link in use (closed, replaced, shut down).
    case linkGone(generation: UInt64)
}

extension ClusterEngine {
    /// Another master was named for the shard (Sentinel's `+switch-master`, the slot
    /// map): a back-off or a connect attempt under way ends, and the next try is at once.
    func requestRelink(shard index: Int) {
        shards[index].relinkRequested = true
        shards[index].wakeup.signal()
    }

    /// Whether what `wait` waits for has come.
    func hasCome(_ wait: ShardWait, shard index: Int) -> Bool {
        guard !isShutdown, index < shards.count, !shards[index].phase.isShutDown else { return true }
        switch wait {
        case .relink:
            return shards[index].relinkRequested
        case .linkGone(let generation):
            guard let link = link(shard: index) else { return true }
            return link.generation != generation || !link.isOpen
        }
    }

    /// Returns once `wait` has come (looked at on every nudge of the shard's wakeup), or when cancelled.
    nonisolated func until(_ wait: ShardWait, shard index: Int, wakeup: ShardWakeup) async {
        while !Task.isCancelled, !(await hasCome(wait, shard: index)) {
            await wakeup.wait()
        }
    }

    /// Sleeps `duration` on the configured clock, or less: until `wait` has come.
    /// - Returns: true when `wait` came first (or had come already).
    func sleep(shard index: Int, for duration: Duration, unless wait: ShardWait) async -> Bool {
        guard !hasCome(wait, shard: index) else { return true }
        let wakeup = shards[index].wakeup
        let clock = configuration.clock
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await clock.sleep(for: duration, tolerance: nil)
                return false
            }
            group.addTask {
                await self.until(wait, shard: index, wakeup: wakeup)
                return true
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
