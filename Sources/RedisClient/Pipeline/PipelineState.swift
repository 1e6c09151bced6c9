/// The bookkeeping of one Redis connection, without sockets or locks: callers
/// waiting for replies in FIFO order, encoded commands waiting for the writer,
/// deadlines, and the lifecycle `open → closed`. Every method decides and
/// returns what to do (resume whom, with what); its owner does it after
/// releasing the lock.
///
/// Generic over the caller's and the writer's continuation so that tests drive
/// it with plain values. Traps on impossible states (a writer parked twice).
struct PipelineState<Caller: Sendable, Writer: Sendable> {
    private struct Entry {
        let caller: Caller
        let sequence: UInt64
        let deadline: ContinuousClock.Instant
        /// Replies still to come (SUBSCRIBE of n channels: n).
        var repliesLeft: Int
        /// The channels of a SUNSUBSCRIBE: its replies look like the `sunsubscribe`
        /// pushes Redis Cluster sends unasked when a slot leaves the node.
        let shardUnsubscribes: Set<[UInt8]>
        /// Several commands sent as one entry (`ASKING` + a command): each answers on
        /// its own, so an error reply does not end the wait; the first error is kept.
        let separateCommands: Bool
        var firstError: String?
    }

    enum EnqueueAction: Sendable {
        case none
        /// The writer was parked: resume it, it has bytes to write now.
        case resumeWriter(Writer)
        case fail(Caller, RedisError)
    }

    enum WriterStep: Sendable {
        /// `buffer` holds bytes to write.
        case write
        /// Nothing to write: park (`parkWriter`).
        case idle
        case stop
    }

    /// What closing does: every pending caller fails, the parked writer and
    /// the close handlers run.
    struct Closing: Sendable {
        var callers: [(Caller, RedisError)] = []
        var writer: Writer?
        var handlers: [@Sendable (RedisConnectionEnd) -> Void] = []
        /// Why it closed, for the handlers.
        var end: RedisConnectionEnd
    }

    let limits: PipelineLimits
    private var entries = FIFO<Entry>()
    private var window = DeadlineWindow()
    private var nextSequence: UInt64 = 0
    /// Encoded commands not yet handed to the writer, in order.
    private var outgoing: [UInt8] = []
    /// The writer task while it waits for bytes.
    private var parkedWriter: Writer?
    private var closeHandlers: [@Sendable (RedisConnectionEnd) -> Void] = []
    /// `open → closed`, once; nothing reopens (a new connection is a new state).
    private var lifecycle = Lifecycle.open

    private enum Lifecycle: Equatable {
        case open
        case closed(RedisConnectionEnd)
    }

    init(limits: PipelineLimits = .standard) {
        self.limits = limits
    }

    var pendingCount: Int { entries.count }

    /// Whether a `sunsubscribe` reply for `channel` is the next reply a caller
    /// awaits (the oldest pending command is a SUNSUBSCRIBE of it); otherwise such
    /// a reply is a push the server sent unasked.
    func awaitsShardUnsubscribe(of channel: [UInt8]) -> Bool {
        entries.first?.shardUnsubscribes.contains(channel) ?? false
    }

    var isOpen: Bool { lifecycle == .open }

    /// Queues a command (its RESP bytes) whose `replies` replies `caller` awaits.
    /// `shardUnsubscribes`: the channels of a SUNSUBSCRIBE (empty for any other command).
    /// `separateCommands`: the bytes are `replies` commands, each answering once
    /// (the caller gets the first error reply, else the last reply, once all came).
    mutating func enqueue(_ command: EncodedCommand, replies: Int, deadline: ContinuousClock.Instant,
                          shardUnsubscribes: Set<[UInt8]> = [], separateCommands: Bool = false,
                          caller: Caller) -> EnqueueAction {
        precondition(replies > 0, "a command awaits at least one reply")
        guard isOpen else { return .fail(caller, .closed) }
        guard entries.count < limits.maxPending, outgoing.count + command.byteCount <= limits.maxUnsentBytes else {
            return .fail(caller, .timedOut)
        }
        command.write(into: &outgoing)
        entries.append(Entry(caller: caller, sequence: nextSequence, deadline: deadline, repliesLeft: replies,
                             shardUnsubscribes: shardUnsubscribes, separateCommands: separateCommands))
        window.add(sequence: nextSequence, deadline: deadline)
        nextSequence += 1
        if let writer = parkedWriter.take() { return .resumeWriter(writer) }
        return .none
    }

    /// The writer takes everything queued: it swaps its emptied buffer in.
    mutating func takeOutgoing(into buffer: inout [UInt8]) -> WriterStep {
        guard isOpen else { return .stop }
        if outgoing.isEmpty { return .idle }
        swap(&outgoing, &buffer)
        return .write
    }

    /// Parks the writer until bytes come; false when it must not wait
    /// (bytes came meanwhile, or closed): the caller resumes it at once.
    mutating func parkWriter(_ writer: Writer) -> Bool {
        precondition(parkedWriter == nil, "the writer parked twice")
        guard isOpen && outgoing.isEmpty else { return false }
        parkedWriter = writer
        return true
    }

    /// Matches a reply with the oldest caller; appends the caller to resume (with
    /// its result) once all its replies came. An error reply ends the caller's wait
    /// at once: Redis refuses a whole command with one error. A reply nobody
    /// waits for closes the connection (the stream cannot be trusted any more).
    mutating func receive(_ reply: Reply, into resumptions: inout [(Caller, Result<RedisValue, RedisError>)]) -> Closing? {
        guard isOpen else { return nil }
        guard !entries.isEmpty else { return close(because: .unreadable("a reply nobody waits for")) }
        let done: Result<RedisValue, RedisError>? = entries.updateFirst { entry in
            switch reply {
            case .error(let message) where entry.separateCommands:
                entry.repliesLeft -= 1
                if entry.firstError == nil { entry.firstError = message }
                return entry.repliesLeft == 0 ? .failure(.server(entry.firstError ?? message)) : nil
            case .error(let message):
                return .failure(.server(message))
            case .value(let value):
                entry.repliesLeft -= 1
                guard entry.repliesLeft == 0 else { return nil }
                return entry.firstError.map { .failure(.server($0)) } ?? .success(value)
            }
        }
        guard let done, let entry = entries.popFirst() else { return nil }
        window.remove(sequence: entry.sequence)
        resumptions.append((entry.caller, done))
        return nil
    }

    /// When the reader must wake at the latest: the earliest deadline, and no
    /// later than `checkInterval` from now (a command may come while it waits).
    /// Nil once closed.
    func readDeadline(now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        guard isOpen else { return nil }
        let check = now + limits.checkInterval
        guard let earliest = window.earliest else { return check }
        return min(earliest, check)
    }

    /// Whether a pending command's deadline has passed (open only).
    func hasPassedDeadline(now: ContinuousClock.Instant) -> Bool {
        guard isOpen, let earliest = window.earliest else { return false }
        return earliest <= now
    }

    /// Closes when a deadline has passed: the callers past theirs fail with
    /// `.timedOut`, the others with `.closed`. Nil when none has passed.
    mutating func expire(now: ContinuousClock.Instant) -> Closing? {
        guard hasPassedDeadline(now: now) else { return nil }
        return close(now: now, because: .replyLate)
    }

    /// Closes (once) `because`: every pending caller fails with `.closed`, or the oldest one
    /// with `firstError` (the reply it awaited was unreadable). Nil if already closed.
    mutating func close(failingFirstWith firstError: RedisError = .closed, because end: RedisConnectionEnd) -> Closing? {
        close(now: nil, firstError: firstError, because: end)
    }

    /// Runs `handler` on close; when already closed, why (the caller runs it now with that).
    mutating func onClose(_ handler: @escaping @Sendable (RedisConnectionEnd) -> Void) -> RedisConnectionEnd? {
        if case .closed(let end) = lifecycle { return end }
        closeHandlers.append(handler)
        return nil
    }

    private mutating func close(now: ContinuousClock.Instant?, firstError: RedisError = .closed,
                                because end: RedisConnectionEnd) -> Closing? {
        switch lifecycle {
        case .closed: return nil
        case .open: lifecycle = .closed(end)
        }
        var closing = Closing(end: end)
        var first = true
        for entry in entries.removeAll() {
            let error: RedisError = if let now, entry.deadline <= now { .timedOut } else if first { firstError } else { .closed }
            closing.callers.append((entry.caller, error))
            first = false
        }
        window.removeAll()
        outgoing = []
        closing.writer = parkedWriter.take()
        swap(&closing.handlers, &closeHandlers)
        return closing
    }
}

/// A command to queue: its arguments, and whether `ASKING` goes just before it, in
/// the same write (`ASKING` grants the next command only, so nothing may come between).
struct EncodedCommand: Sendable {
    let arguments: RedisArguments
    let afterAsking: Bool

    /// `ASKING` in RESP.
    private static let asking: [UInt8] = Array("*1\r\n$6\r\nASKING\r\n".utf8)

    var byteCount: Int { arguments.byteCount + (afterAsking ? Self.asking.count : 0) }

    func write(into buffer: inout [UInt8]) {
        if afterAsking { buffer.append(contentsOf: Self.asking) }
        arguments.write(into: &buffer)
    }
}
