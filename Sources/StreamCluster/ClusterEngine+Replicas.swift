/// `--redis-min-replicas`: publishes take turns per shard. A `WAIT` blocks the
/// connection it is sent on until the replicas confirm or its timeout ends, so
/// publishes pipelined behind one would each wait out the one before (a silent
/// replica: N × the WAIT timeout, past the command timeout, and the link closed).
/// One script + `WAIT` at a time on the shard's publishing connection instead, and
/// once a `WAIT` came back short, the publishes waiting their turn and those arriving
/// in the next second are refused at once without being stored (503), while one at a
/// time still tries (so the first that is confirmed again ends the refusals). The
/// command connection (fences, syncs, counts, probes) is never held. A publish waits
/// its turn no longer than its own deadline (the command timeout): refused then (503).
struct ReplicaTurns {
    /// A publish holds the turn (its script and `WAIT` are under way).
    var busy = false
    /// Publishes waiting their turn, in arrival order (true: go; false: refused).
    var waiting: [(id: UInt64, continuation: CheckedContinuation<Bool, Never>)] = []
    /// The last waiter's id (its deadline's timer finds it by that).
    var lastID: UInt64 = 0
    /// Until when publishes that would wait are refused at once (a `WAIT` came back short).
    var shortUntil: ContinuousClock.Instant?
    /// The last short `WAIT`'s count, for the refusal's text.
    var lastAcknowledged = 0

    /// At most this many publishes wait their turn per shard; more are refused (503).
    static let waitingLimit = 4096
    /// How long after a short `WAIT` publishes that would wait are refused at once.
    static let refusalWindow: Duration = .seconds(1)
}

extension ClusterEngine {
    /// Waits for the shard's turn until `deadline`; false: refused (replicas short, too
    /// many waiting, the engine shutting down, or `deadline` passed while waiting).
    func takeReplicaTurn(shard index: Int, until deadline: PublishDeadline) async -> Bool {
        var turns = replicaTurns[index] ?? ReplicaTurns()
        if !turns.busy {
            turns.busy = true
            replicaTurns[index] = turns
            return true
        }
        if let until = turns.shortUntil, until > .now { return false }
        guard turns.waiting.count < ReplicaTurns.waitingLimit, !isShutdown, deadline.isAhead() else { return false }
        turns.lastID += 1
        let id = turns.lastID
        replicaTurns[index] = turns
        return await withTaskGroup(of: Void.self, returning: Bool.self) { group in
            group.addTask {
                do { try await Task.sleep(until: deadline.instant, clock: .continuous) } catch { return }
                await self.replicaTurnOverdue(shard: index, id: id)
            }
            let granted = await withCheckedContinuation { continuation in
                // Decided again here: entering the task group can let other work of the engine
                // run first (the turn may have been released meanwhile).
                var turns = replicaTurns[index] ?? ReplicaTurns()
                if isShutdown || turns.shortUntil.map({ $0 > .now }) == true {
                    continuation.resume(returning: false)
                } else if !turns.busy {
                    turns.busy = true
                    replicaTurns[index] = turns
                    continuation.resume(returning: true)
                } else {
                    turns.waiting.append((id, continuation))
                    replicaTurns[index] = turns
                }
            }
            group.cancelAll()
            return granted
        }
    }

    /// A waiter's deadline passed before its turn came: refused now.
    private func replicaTurnOverdue(shard index: Int, id: UInt64) {
        guard let at = replicaTurns[index]?.waiting.firstIndex(where: { $0.id == id }) else { return }  // Settled.
        let waiter = replicaTurns[index]!.waiting.remove(at: at).continuation
        waiter.resume(returning: false)
    }

    /// The turn's publish is done; `short`: the count of replicas its `WAIT` confirmed
    /// when too few (everyone waiting is refused, and newcomers for `refusalWindow`).
    func releaseReplicaTurn(shard index: Int, short: Int?) {
        var turns = replicaTurns[index] ?? ReplicaTurns()
        var refused: [CheckedContinuation<Bool, Never>] = []
        var next: CheckedContinuation<Bool, Never>?
        if let short {
            turns.lastAcknowledged = short
            turns.shortUntil = .now + ReplicaTurns.refusalWindow
            refused = turns.waiting.map(\.continuation)
            turns.waiting = []
            turns.busy = false
        } else {
            turns.shortUntil = nil
            if turns.waiting.isEmpty {
                turns.busy = false
            } else {
                next = turns.waiting.removeFirst().continuation  // The turn passes on: busy stays.
            }
        }
        replicaTurns[index] = turns
        for waiter in refused { waiter.resume(returning: false) }
        next?.resume(returning: true)
    }

    /// Shutdown: nobody waits for a turn any more.
    func refuseReplicaTurns() {
        let waiting = replicaTurns.values.flatMap(\.waiting)
        replicaTurns = [:]
        for waiter in waiting { waiter.continuation.resume(returning: false) }
    }

    /// Why a publish was refused without being stored.
    func replicasShortText(shard index: Int) -> String {
        "refused without storing it: a publish just before was confirmed by only "
            + "\(replicaTurns[index]?.lastAcknowledged ?? 0) of the \(configuration.minReplicas) replicas required "
            + "(--redis-min-replicas) within \(configuration.minReplicasTimeout); retry in a moment"
    }
}
