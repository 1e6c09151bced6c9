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
    /// Whether the descriptor is in the loop's `deadlineFDs` (so a wait with a deadline
    /// inserts it only when it is not: no set insert per request).
    var listedForDeadlines = false
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
