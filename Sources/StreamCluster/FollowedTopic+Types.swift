import StreamHub

/// What a followed topic's state machine takes and answers, and its fences: the
/// subscribers waiting until the hub holds what Redis held when they arrived
/// (`ClusterEngine+Fence` resumes them).
extension FollowedTopic {
    /// What happens to the topic (one per engine-facing call below).
    enum Event {
        case takeSubscribe, subscribed
        case takeSync, syncFailed, synced(state: UInt64, events: UInt64), takePending
        case message(ClusterMessage)
        /// This gateway's own publish, from the script's reply.
        case stored(ClusterMessage)
        /// After an apply: the next own publish held ahead, if it is next now.
        case takeAhead
        /// A fence was overdue, or this gateway's publishes turned out lost: whatever may
        /// have been lost on the way is fetched again.
        case resync
        /// Redis's ids were raised past what it held (a `Last-Event-ID` on a topic it held
        /// nothing for): a sync sent before may predate the raise, so one follows it.
        case raised
        case linkLost
        case leave, stayed, forgotten
    }

    /// What the engine must do after an event.
    enum Action: Equatable {
        case none
        /// Send the pub/sub SUBSCRIBE (the worker batches them).
        case subscribe
        /// A sync is due: ring the worker.
        case sync
        /// Run the sync script for what came after these ids.
        case runSync(afterState: UInt64, afterEvents: UInt64)
        /// Apply the message to the hub.
        case apply(ClusterMessage)
        /// The topic is live: fences may be reached.
        case live
    }

    /// A subscriber's fence: it waits until the hub holds at least these ids (what
    /// Redis held when it arrived), so it starts no older than any acknowledged publish.
    struct Fence: Equatable {
        typealias ID = UInt64
        let id: ID
        let state: UInt64
        let events: UInt64
        /// Its last time passed with nothing moved (and the topic synced again); a
        /// catch-up that moves on by its next time clears it.
        var overdue = false
        /// The engine's catch-up progress (`ClusterEngine.catchUpProgress`) when the
        /// fence was last looked at: while its topic catches up, a fence is not overdue
        /// as long as this moves between two of its times.
        var progress: UInt64 = 0
        /// How many more times it may wait on because its topic is still catching up
        /// (`ClusterConfiguration.fenceCatchUpLimit` over `fenceTimeout`); none once
        /// its topic's sync failed or it was overdue on a live topic.
        var catchUpTimesLeft = 0
    }

    /// What became of an overdue fence.
    enum Overdue: Equatable {
        /// First time: the topic syncs again (`action`), the fence waits as long again;
        /// or its topic is still catching up and the engine's catch-up moved on (`.none`).
        case extended(Action)
        /// Second time in a row: the subscriber is refused.
        case failed
        /// Reached or gone meanwhile.
        case settled
    }
}
