import CStreamsSSL
import Glibc

/// A descriptor's place in the event loop: the descriptor and the generation it
/// was registered under. Events carry both (packed in `epoll_data.u64`), so an
/// event for a descriptor that was closed and reused is dropped, not misdelivered.
public struct LoopRegistration: Sendable, Hashable {
    public let fd: Int32
    let generation: UInt32

    var token: UInt64 { UInt64(generation) << 32 | UInt64(UInt32(bitPattern: fd)) }
}

/// Which readiness a task waits for.
enum Interest: Sendable {
    case read
    case write
}

/// Which of a descriptor's (at most) two tasks waits: the one that reads or
/// the one that writes. Each has its own waiter and its own unconsumed edges:
/// over TLS the reader may need writability (`SSL_read` has to send) and the
/// writer readability (`SSL_write` has to receive), and neither may consume
/// the edge the other is waiting for.
enum IORole: Sendable {
    case reader
    case writer

    static let both: [IORole] = [.reader, .writer]

    /// The role that normally waits for `interest`.
    init(natural interest: Interest) {
        self = interest == .read ? .reader : .writer
    }
}

/// A suspended task waiting for readiness, with its optional deadline.
struct Waiter {
    let id: UInt64
    let interest: Interest
    let continuation: CheckedContinuation<Void, Error>
    let deadline: ContinuousClock.Instant?
}

/// Edges nobody has consumed yet, one flag per (role, readiness).
struct PendingEdges: OptionSet {
    let rawValue: UInt8

    static let readableForReader = PendingEdges(rawValue: 1)
    static let writableForReader = PendingEdges(rawValue: 2)
    static let readableForWriter = PendingEdges(rawValue: 4)
    static let writableForWriter = PendingEdges(rawValue: 8)
    static let readable: PendingEdges = [.readableForReader, .readableForWriter]
    static let writable: PendingEdges = [.writableForReader, .writableForWriter]
    static let all: PendingEdges = [.readable, .writable]

    static func edge(_ interest: Interest, for role: IORole) -> PendingEdges {
        switch (role, interest) {
        case (.reader, .read): return .readableForReader
        case (.reader, .write): return .writableForReader
        case (.writer, .read): return .readableForWriter
        case (.writer, .write): return .writableForWriter
        }
    }
}

/// One registered descriptor. Readiness is edge-triggered: a flag records an
/// edge a role has not consumed yet, so an edge that arrives between `EAGAIN`
/// and the wait is never lost (the wait returns at once and the caller retries).
struct Slot {
    let generation: UInt32
    /// Unconsumed edges (all set at first: the first attempt is free).
    var pending = PendingEdges.all
    /// The peer hung up, the socket errored, or we aborted it; sticky.
    var hungUp = false
    /// The reading task's wait (for readability, or writability over TLS).
    var readerWaiter: Waiter?
    /// The writing task's wait (for writability, or readability over TLS).
    var writerWaiter: Waiter?
    /// Called once, off the lock, when the hang-up is first seen.
    var hangUpHandler: (@Sendable () -> Void)?

    init(generation: UInt32) {
        self.generation = generation
    }

    subscript(role: IORole) -> Waiter? {
        get { role == .reader ? readerWaiter : writerWaiter }
        set { if role == .reader { readerWaiter = newValue } else { writerWaiter = newValue } }
    }

    /// Consumes `role`'s edge for `interest` if there is one.
    mutating func consumeEdge(_ interest: Interest, for role: IORole) -> Bool {
        pending.remove(.edge(interest, for: role)) != nil
    }

    /// Takes the waiters whose edge has arrived, consuming their edges.
    mutating func takeReadyWaiters(into actions: inout LoopActions) {
        takeIfReady(.reader, into: &actions)
        takeIfReady(.writer, into: &actions)
    }

    private mutating func takeIfReady(_ role: IORole, into actions: inout LoopActions) {
        if let waiter = self[role], consumeEdge(waiter.interest, for: role) {
            self[role] = nil
            actions.resumptions.append((waiter.continuation, .success(())))
        }
    }
}

/// Work decided under the loop's lock and done after releasing it: resuming
/// continuations and calling hang-up handlers never happens under the lock.
struct LoopActions {
    var resumptions: [(CheckedContinuation<Void, Error>, Result<Void, Error>)] = []
    var handlers: [@Sendable () -> Void] = []

    func run() {
        for (continuation, result) in resumptions { continuation.resume(with: result) }
        for handler in handlers { handler() }
    }
}

/// Everything the loop's lock guards: the slot table indexed by descriptor and
/// the set of descriptors that have a waiter with a deadline.
struct LoopState {
    var slots: [Slot?] = []
    var nextGeneration: UInt32 = 1
    var deadlineFDs: Set<Int32> = []
    /// Descriptors registered now (how busy the loop is, for spreading connections).
    var registeredCount = 0

    mutating func register(_ fd: Int32) -> LoopRegistration {
        let index = Int(fd)
        if index >= slots.count {
            slots.append(contentsOf: repeatElement(nil, count: max(index + 1 - slots.count, slots.count / 2)))
        }
        precondition(slots[index] == nil, "descriptor \(fd) registered twice")
        let generation = nextGeneration
        nextGeneration &+= 1
        if nextGeneration == 0 { nextGeneration = 1 }
        slots[index] = Slot(generation: generation)
        registeredCount += 1
        return LoopRegistration(fd: fd, generation: generation)
    }

    /// Removes the slot; its waiters are told the descriptor closed.
    mutating func deregister(_ registration: LoopRegistration, into actions: inout LoopActions) {
        guard let slot = slot(registration) else { return }
        slots[Int(registration.fd)] = nil
        registeredCount -= 1
        deadlineFDs.remove(registration.fd)
        for waiter in [slot.readerWaiter, slot.writerWaiter] {
            if let waiter { actions.resumptions.append((waiter.continuation, .failure(IOWaitError.closed))) }
        }
    }

    func slot(_ registration: LoopRegistration) -> Slot? {
        let index = Int(registration.fd)
        guard index >= 0, index < slots.count, let slot = slots[index], slot.generation == registration.generation else {
            return nil
        }
        return slot
    }

    /// Applies one epoll event (or an abort, with `hangUp`) to a slot.
    mutating func apply(_ registration: LoopRegistration, readable: Bool, writable: Bool, hangUp: Bool,
                        into actions: inout LoopActions) {
        let index = Int(registration.fd)
        guard var slot = slot(registration) else { return }
        if hangUp && !slot.hungUp {
            slot.hungUp = true
            if let handler = slot.hangUpHandler.take() { actions.handlers.append(handler) }
        }
        if readable || hangUp { slot.pending.formUnion(.readable) }
        if writable || hangUp { slot.pending.formUnion(.writable) }
        slot.takeReadyWaiters(into: &actions)
        slots[index] = slot
    }

    /// Ends every wait whose deadline has passed.
    mutating func expire(now: ContinuousClock.Instant, into actions: inout LoopActions) {
        for fd in deadlineFDs {
            guard var slot = slots[Int(fd)] else { deadlineFDs.remove(fd); continue }
            for role in IORole.both {
                if let waiter = slot[role], let deadline = waiter.deadline, deadline <= now {
                    slot[role] = nil
                    actions.resumptions.append((waiter.continuation, .failure(IOWaitError.timedOut)))
                }
            }
            if slot.readerWaiter?.deadline == nil && slot.writerWaiter?.deadline == nil { deadlineFDs.remove(fd) }
            slots[Int(fd)] = slot
        }
    }
}
