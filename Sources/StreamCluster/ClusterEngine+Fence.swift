import RedisClient
import StreamHub
import Synchronization

/// The fence, in one place: a new subscriber of a topic waits until this gateway's
/// mirror holds at least what Redis held when it arrived (its fence, read with one
/// `HMGET` per topic), so it starts no older than anything acknowledged to a
/// publisher anywhere.
///
/// The wait ends with the event that settles it, never on a polling tick:
/// - reached: the message or the sync that brings the mirror there
///   (`fencesMayBeReached`, after `FollowedTopic` went or stayed live);
/// - refused: the link lost or the engine shut down (`topicsLostTheLink`);
/// - left: the subscriber's task was cancelled (its client went away): its
///   cancellation handler forgets the fence at once, and nothing counts it;
/// - overdue: after `fenceTimeout` on the configured clock the topic syncs again
///   (a message may have been lost on the way), and as long again later the
///   subscriber is refused (503); but while its topic still catches up (subscribing
///   or syncing) and the engine's catch-up moves on (`catchUpProgress`: a `SUBSCRIBE`
///   batch confirmed, a sync answered or a round of fence reads answered between two of
///   the fence's times), it waits on; it is refused only after two times in a row with
///   nothing moved (`FollowedTopic.fenceOverdue`).
extension ClusterEngine {
    /// The ids the mirror of `topic` must reach, from the `HMGET` of its ids; nil when
    /// the ids had to be raised past a `Last-Event-ID` and Redis refused (out of memory,
    /// say) or did not answer: served as if without it, the client would see ids start
    /// below the one it had, so it is refused (503) and retries.
    func fence(topic: String, reply: RedisValue, channel: Channel, resumeAfter: UInt64?,
               link: RedisLink) async -> (state: UInt64, events: UInt64)? {
        let ids = reply.array ?? []
        let state = UInt64(max(0, ids.first?.integer ?? 0))
        var events = UInt64(max(0, ids.count > 1 ? ids[1].integer ?? 0 : 0))
        if channel == .events, let resumeAfter, resumeAfter > events, ids.allSatisfy({ $0 == .null }),
           resumeAfter <= Self.largestResumeID {
            // Redis holds no ids for the topic (never published, or Redis lost them) but the
            // client has had `resumeAfter`: the topic's ids go on past it, never backwards.
            // (A `Last-Event-ID` above ids Redis does hold is treated as absent, as API.md
            // says and the memory engine does: raising the ids then would let any client
            // make a topic's ids jump for every subscriber.)
            let arguments: [[UInt8]] = [Array("0".utf8), Array(String(resumeAfter).utf8)]
            guard (try? await runScript("raiseIDs", ClusterScripts.raiseIDs, link: link,
                                        keys: [ClusterKeys(topic: topic).ids], arguments: arguments)) != nil
            else { return nil }
            // The mirror must reach the raised ids before the subscriber starts (a sync brings them).
            events = resumeAfter
            if followed[topic]?.idsRaised() == .sync { doorbellRinger.yield() }
        }
        return (state, events)
    }

    /// Waits until the mirror holds at least the given ids; false when Redis went
    /// away meanwhile, the topic could not be brought there, or the subscriber left.
    func reachFence(topic: String, state: UInt64, events: UInt64) async -> Bool {
        guard let entry = followed[topic], link(of: topic) != nil, !isShutdown, !Task.isCancelled else { return false }
        if entry.reached(state: state, events: events) { return true }
        let id = fenceWaits.nextID()
        return await withTaskCancellationHandler {
            await withTaskGroup(of: Void.self, returning: Bool.self) { group in
                group.addTask { await self.timeFence(id, topic: topic) }
                let reached = await withCheckedContinuation { continuation in
                    // Checked again here: entering the task group and the continuation can let
                    // other work of the engine run first (measured: the topic's sync went live in
                    // between, and a fence registered after that waited out fenceTimeout).
                    // And cancellation: a subscriber cancelled since the first check had its
                    // cancellation handler find no wait to remove; it must not register one now.
                    guard followed[topic] != nil, link(of: topic) != nil, !isShutdown, !Task.isCancelled else {
                        continuation.resume(returning: false)
                        return
                    }
                    if followed[topic]!.reached(state: state, events: events) {
                        continuation.resume(returning: true)
                        return
                    }
                    fenceWaits.add(id, continuation)
                    followed[topic]!.wait(FollowedTopic.Fence(id: id, state: state, events: events, progress: catchUpProgress,
                                                              catchUpTimesLeft: configuration.fenceCatchUpTimes))
                }
                group.cancelAll()
                return reached
            }
        } onCancel: {
            // Runs after the wait was registered (the engine is busy until then).
            Task { await self.fenceLeft(id, topic: topic) }
        }
    }

    /// The fence's time, on the configured clock: each `fenceTimeout` it is overdue
    /// once, until settled (the wait's end cancels this).
    private nonisolated func timeFence(_ id: FollowedTopic.Fence.ID, topic: String) async {
        while true {
            do {
                try await configuration.clock.sleep(for: configuration.fenceTimeout, tolerance: nil)
            } catch {
                return
            }
            guard await fenceOverdue(id, topic: topic) else { return }
        }
    }

    /// Whether the fence still waits after being overdue.
    private func fenceOverdue(_ id: FollowedTopic.Fence.ID, topic: String) -> Bool {
        let wasLive = followed[topic]?.isLive == true
        switch followed[topic]?.fenceOverdue(id, progress: catchUpProgress) ?? .settled {
        case .extended(let action):
            if action == .sync { doorbellRinger.yield() }
            // Live but short of the fence: a message on its way was late or lost (not a slow
            // catch-up), and the topic syncs again now.
            if wasLive, action == .sync { fenceOverdueCount.add(1, ordering: .relaxed) }
            return true
        case .failed:
            settle(id, reached: false)
            return false
        case .settled:
            return false
        }
    }

    /// The subscriber's task was cancelled while it waited.
    private func fenceLeft(_ id: FollowedTopic.Fence.ID, topic: String) {
        guard followed[topic]?.removeFence(id) == true else { return }  // Settled already.
        settle(id, reached: false)
    }

    /// The topic went (or stayed) live or its mirror moved on: resumes the fences it reached.
    func fencesMayBeReached(_ topic: String) {
        for id in followed[topic]?.takeReachedFences() ?? [] { settle(id, reached: true) }
    }

    /// The link is gone (or the engine shut down): every followed topic (or those of
    /// `names`: the topics of one shard) starts over, and its fences are refused.
    func topicsLostTheLink(_ names: [String]? = nil) {
        for name in names ?? Array(followed.keys) {
            for id in followed[name]?.linkLost() ?? [] { settle(id, reached: false) }
        }
    }

    private func settle(_ id: FollowedTopic.Fence.ID, reached: Bool) {
        fenceWaits.take(id)?.resume(returning: reached)
    }

    /// The highest id a client's `Last-Event-ID` may raise a topic's ids to (Lua's
    /// numbers are exact to 2^53; a forged header must not take ids near it).
    static var largestResumeID: UInt64 { 1 << 48 }
}

/// The continuations of the subscribers waiting for their fence, by fence id: the
/// engine resumes each exactly once (`take`), whichever event settles it first.
struct FenceWaits {
    private var waiting: [FollowedTopic.Fence.ID: CheckedContinuation<Bool, Never>] = [:]
    private var lastID: FollowedTopic.Fence.ID = 0

    mutating func nextID() -> FollowedTopic.Fence.ID {
        lastID += 1
        return lastID
    }

    mutating func add(_ id: FollowedTopic.Fence.ID, _ continuation: CheckedContinuation<Bool, Never>) {
        waiting[id] = continuation
    }

    mutating func take(_ id: FollowedTopic.Fence.ID) -> CheckedContinuation<Bool, Never>? {
        waiting.removeValue(forKey: id)
    }
}

/// Reading the fences in rounds (`FenceReads`).
extension ClusterEngine {
    /// What Redis holds of `topics`' ids, read in the next round (shared with every
    /// subscriber that arrives before it goes out); a topic missing could not be read.
    func readFences(of topics: [String]) async -> FenceReads.Replies {
        let id = fenceReads.nextID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                // A subscriber cancelled before it got here has nobody to wait for.
                guard !isShutdown, !Task.isCancelled else {
                    continuation.resume(returning: [:])
                    return
                }
                fenceReads.add(id, topics: topics, continuation)
                doorbellRinger.yield()  // The worker sends the round.
            }
        } onCancel: {
            Task { await self.fenceReadLeft(id) }
        }
    }

    private func fenceReadLeft(_ id: FenceReads.ID) {
        fenceReads.take(id)?.resume(returning: [:])
    }

    /// Sends the round's reads (one `HMGET` per topic, on its shard's link, pipelined)
    /// and resumes its subscribers with the replies. Run by the worker.
    func readFenceRound(_ waiters: [FenceReads.ID], topics: Set<String>) async {
        var reads: [(String, RedisConnection)] = []
        for topic in topics {
            if let link = link(of: topic) { reads.append((topic, link.command)) }
        }
        let timeout = configuration.commandTimeout
        let replies = await withTaskGroup(of: (String, RedisValue?).self, returning: FenceReads.Replies.self) { group in
            for (topic, connection) in reads {
                group.addTask {
                    (topic, try? await connection.command(["HMGET", ClusterKeys(topic: topic).ids, "state", "events"],
                                                          timeout: timeout))
                }
            }
            var replies: FenceReads.Replies = [:]
            for await (topic, reply) in group {
                if let reply { replies[topic] = reply }
            }
            return replies
        }
        // Redis answering the engine's reads is its catch-up moving on too: a topic whose one
        // sync waits behind a loop busy with thousands of arriving subscribers is not stalled.
        if !replies.isEmpty { catchUpProgress &+= 1 }
        for id in waiters { fenceReads.take(id)?.resume(returning: replies) }
    }

    /// The engine shuts down: nobody waits for a round any more.
    func refuseFenceReads() {
        for waiter in fenceReads.takeAll() { waiter.resume(returning: [:]) }
    }
}
