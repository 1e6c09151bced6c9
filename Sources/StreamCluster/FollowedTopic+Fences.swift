import StreamHub

/// A followed topic's fences: the subscribers waiting until the hub holds at least the
/// ids Redis held when they arrived (their continuations are the engine's, `FenceWaits`).
extension FollowedTopic {
    // MARK: Fences

    /// Whether the hub holds at least the fence's ids now (only when live: during a
    /// sync the hub is being filled and a subscriber must not start in the middle).
    func reached(state: UInt64, events: UInt64) -> Bool {
        isLive && lastState >= state && lastEvents >= events
    }

    /// A subscriber waits for its fence (after `reached` said no).
    mutating func wait(_ fence: Fence) {
        fences.append(fence)
    }

    /// Takes the fences reached now.
    mutating func takeReachedFences() -> [Fence.ID] {
        guard isLive, !fences.isEmpty else { return [] }
        var reached: [Fence.ID] = []
        let (state, events) = (lastState, lastEvents)
        fences.removeAll { fence in
            guard state >= fence.state, events >= fence.events else { return false }
            reached.append(fence.id)
            return true
        }
        return reached
    }

    /// The fence's time passed. `progress`: the engine's catch-up progress now
    /// (`ClusterEngine.catchUpProgress`). While the topic is not live (its `SUBSCRIBE`
    /// or sync is under way, as for thousands of topics followed at once after a
    /// restart, whose windows take seconds to load) and that progress moved since the
    /// fence's last time, the fence is not overdue (and no longer counts as having been:
    /// one stalled time on a loaded machine does not refuse a catch-up that moves on
    /// after it): it waits as long again, at most `Fence.catchUpTimesLeft` more times
    /// (a stalled time uses one up too).
    /// Else it is: a first time syncs a live topic again, and a second in a row
    /// refuses the subscriber (a live topic's second, whatever moved meanwhile).
    mutating func fenceOverdue(_ id: Fence.ID, progress: UInt64) -> Overdue {
        guard let index = fences.firstIndex(where: { $0.id == id }) else { return .settled }
        let fence = fences[index]
        if !isLive, progress != fence.progress, fence.catchUpTimesLeft > 0 {
            fences[index].progress = progress
            fences[index].catchUpTimesLeft -= 1
            fences[index].overdue = false
            return .extended(.none)
        }
        fences[index].progress = progress
        if fences[index].overdue {
            fences.remove(at: index)
            return .failed
        }
        fences[index].overdue = true
        if isLive {
            // A live topic that has not reached the fence lacks an id: the sync this asks
            // for is its one chance, not a catch-up to wait on.
            fences[index].catchUpTimesLeft = 0
        } else if fences[index].catchUpTimesLeft > 0 {
            // A stalled time counts against the catch-up's times as a moving one does, so
            // the longest wait stays `fenceCatchUpLimit` and two fence times.
            fences[index].catchUpTimesLeft -= 1
        }
        return .extended(on(.resync))
    }

    /// The fence's subscriber left (or was answered): forgets it. True if it was waiting.
    mutating func removeFence(_ id: Fence.ID) -> Bool {
        guard let index = fences.firstIndex(where: { $0.id == id }) else { return false }
        fences.remove(at: index)
        return true
    }
}
