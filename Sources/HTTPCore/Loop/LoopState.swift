import CStreamsSSL
import Glibc

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
                if let waiter = slot[role], let deadline = waiter.deadline, deadline.hasPassed(at: now) {
                    slot[role] = nil
                    actions.resumptions.append((waiter.continuation, .failure(IOWaitError.timedOut)))
                }
            }
            if slot.readerWaiter?.deadline == nil && slot.writerWaiter?.deadline == nil {
                deadlineFDs.remove(fd)
                slot.listedForDeadlines = false
            }
            slots[Int(fd)] = slot
        }
    }
}
