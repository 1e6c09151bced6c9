/// Who writes a pumped stream's socket, as a pure state machine (`StreamPump`
/// holds it under a lock and carries out what its methods return).
///
/// Phases: the connection's task writes (the first batch, or a remainder the socket
/// did not take at once) in `taskWriting`; the loop writes in `flushing`; between
/// them the pump is `armed` (the source will call `ready`) or `scheduled` (on the
/// loop's turn-end list). Only one of task and loop ever writes: the loop's flush
/// starts only from `scheduled`, and the task writes only after the loop handed it
/// the rest (`handOver`) or before the first `rearm`. `ended` is terminal.
struct StreamPumpState<Continuation, Handover> {
    enum Phase: Equatable {
        case taskWriting
        case armed
        case scheduled
        /// `readyAgain`: the source called `ready` while the flush was taking.
        case flushing(readyAgain: Bool)
        case ended
    }

    typealias Event = StreamPumpEvent<Handover>

    /// After a take found nothing: whether the flush takes once more.
    enum AfterEmptyTake: Equatable {
        case takeAgain
        case stop
    }

    private(set) var phase = Phase.taskWriting
    /// The task, parked until the loop hands it something or the stream ends.
    private var waiter: Continuation?
    /// An event for the task that has not been collected yet.
    private var event: Event?

    init() {}

    /// The source has something: true when the pump must be put on the loop's
    /// turn-end list now.
    mutating func sourceIsReady() -> Bool {
        switch phase {
        case .armed:
            phase = .scheduled
            return true
        case .flushing:
            phase = .flushing(readyAgain: true)
            return false
        case .taskWriting, .scheduled, .ended:
            // The task reschedules when it is done; already listed; over.
            return false
        }
    }

    /// The loop's flush starts; false when there is nothing to do (ended).
    mutating func beginFlush() -> Bool {
        guard phase == .scheduled else { return false }
        phase = .flushing(readyAgain: false)
        return true
    }

    /// The flush's take returned `.pending`.
    mutating func tookNothing() -> AfterEmptyTake {
        switch phase {
        case .flushing(readyAgain: true):
            phase = .flushing(readyAgain: false)
            return .takeAgain
        case .flushing(readyAgain: false):
            phase = .armed
            return .stop
        default:
            return .stop
        }
    }

    /// The socket would block mid-batch: the task writes the rest. Returns the
    /// parked task to resume with the event, if it is parked (else it collects it).
    mutating func handOver(_ rest: Handover) -> (Continuation, Event)? {
        guard case .flushing = phase else { return nil }
        phase = .taskWriting
        return deliver(.write(rest))
    }

    /// The task finished writing: true when the pump must be put on the loop's
    /// turn-end list (to take what gathered meanwhile).
    mutating func rearm() -> Bool {
        guard phase == .taskWriting else { return false }
        phase = .scheduled
        return true
    }

    /// The task waits: the event to act on now, if one is there; else the
    /// continuation is kept until one comes.
    mutating func wait(_ continuation: Continuation) -> Event? {
        if let event = event.take() { return event }
        precondition(waiter == nil, "a pumped stream has one task")
        waiter = continuation
        return nil
    }

    /// Ends the stream (idempotent): `first` is true the first time; `resume` is the
    /// parked task to resume with `.ended`, if it is parked.
    mutating func end() -> (first: Bool, resume: Continuation?) {
        guard phase != .ended else { return (false, nil) }
        phase = .ended
        // A remainder not yet collected is moot now.
        event = nil
        return (true, deliver(.ended)?.0)
    }

    private mutating func deliver(_ next: Event) -> (Continuation, Event)? {
        if let waiter = waiter.take() { return (waiter, next) }
        event = next
        return nil
    }
}

/// What a pumped stream's task gets when it waits (`StreamPumpState.wait`).
enum StreamPumpEvent<Handover> {
    /// Write the rest of a batch, waiting for readiness; then `rearm`.
    case write(Handover)
    /// The stream is over.
    case ended
}

extension StreamPumpEvent: Sendable where Handover: Sendable {}
