import Synchronization

/// What the coordinator may know of one subscriber while its task runs: where
/// it stands and the last delivery it got, to tell when every subscriber has
/// caught up with the last publish.
final class SubscriberProbe: Sendable {
    /// A subscriber's lifecycle, as seen from outside its task.
    enum Phase: UInt8 {
        /// Waiting for its start time, or connecting.
        case pending
        /// Its head arrived; it is reading events.
        case streaming
        /// It could not connect (counted in `connectFailed`).
        case failed
        /// Its stream ended while the run went on (counted in `endedEarly`).
        case ended
    }

    /// The topic it subscribes to.
    let topic: Int
    private let rawPhase = Atomic<UInt8>(Phase.pending.rawValue)
    /// `Payload.tag` of its last delivery, 0 before the first.
    let lastTag = Atomic<UInt64>(0)

    init(topic: Int) {
        self.topic = topic
    }

    var phase: Phase { Phase(rawValue: rawPhase.load(ordering: .acquiring)) ?? .pending }

    func enter(_ phase: Phase) {
        rawPhase.store(phase.rawValue, ordering: .releasing)
    }
}
