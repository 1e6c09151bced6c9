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
enum Interest {
    case read
    case write
}

/// A suspended task waiting for readiness, with its optional deadline.
struct Waiter {
    let id: UInt64
    let continuation: CheckedContinuation<Void, Error>
    let deadline: ContinuousClock.Instant?
}

/// One registered descriptor. Readiness is edge-triggered: a flag records an
/// edge nobody has consumed yet, so an edge that arrives between `EAGAIN` and
/// the wait is never lost (the wait returns at once and the caller retries).
struct Slot {
    let generation: UInt32
    /// An unconsumed "readable" edge (starts true: the first attempt is free).
    var readable = true
    /// An unconsumed "writable" edge.
    var writable = true
    /// The peer hung up, the socket errored, or we aborted it; sticky.
    var hungUp = false
    var readWaiter: Waiter?
    var writeWaiter: Waiter?
    /// Called once, off the lock, when the hang-up is first seen.
    var hangUpHandler: (@Sendable () -> Void)?

    init(generation: UInt32) {
        self.generation = generation
    }
}

/// Work decided under the loop's lock and done after releasing it: resuming
/// continuations and calling hang-up handlers never happens under the lock.
struct LoopActions {
    var resumptions: [(CheckedContinuation<Void, Error>, Result<Void, Error>)] = []
    var handlers: [@Sendable () -> Void] = []

    var isEmpty: Bool { resumptions.isEmpty && handlers.isEmpty }

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
    var running = true

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
        return LoopRegistration(fd: fd, generation: generation)
    }

    /// Removes the slot; its waiters are told the descriptor closed.
    mutating func deregister(_ registration: LoopRegistration, into actions: inout LoopActions) {
        guard var slot = slot(registration) else { return }
        slots[Int(registration.fd)] = nil
        deadlineFDs.remove(registration.fd)
        if let waiter = slot.readWaiter.take() { actions.resumptions.append((waiter.continuation, .failure(IOWaitError.closed))) }
        if let waiter = slot.writeWaiter.take() { actions.resumptions.append((waiter.continuation, .failure(IOWaitError.closed))) }
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
        if readable || hangUp { slot.readable = true }
        if writable || hangUp { slot.writable = true }
        if slot.readable, let waiter = slot.readWaiter.take() {
            slot.readable = false
            actions.resumptions.append((waiter.continuation, .success(())))
        }
        if slot.writable, let waiter = slot.writeWaiter.take() {
            slot.writable = false
            actions.resumptions.append((waiter.continuation, .success(())))
        }
        slots[index] = slot
    }

    /// Ends every wait whose deadline has passed.
    mutating func expire(now: ContinuousClock.Instant, into actions: inout LoopActions) {
        for fd in deadlineFDs {
            guard var slot = slots[Int(fd)] else { deadlineFDs.remove(fd); continue }
            if let waiter = slot.readWaiter, let deadline = waiter.deadline, deadline <= now {
                slot.readWaiter = nil
                actions.resumptions.append((waiter.continuation, .failure(IOWaitError.timedOut)))
            }
            if let waiter = slot.writeWaiter, let deadline = waiter.deadline, deadline <= now {
                slot.writeWaiter = nil
                actions.resumptions.append((waiter.continuation, .failure(IOWaitError.timedOut)))
            }
            if slot.readWaiter?.deadline == nil && slot.writeWaiter?.deadline == nil { deadlineFDs.remove(fd) }
            slots[Int(fd)] = slot
        }
    }
}
