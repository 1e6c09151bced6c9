import HTTPCore
import Locking
import Synchronization

/// The storage behind `RedisConnection` and `RedisSubscriber`: one socket, the
/// pipeline's state under a lock, and the connection's two tasks, both on the
/// event loop for the connection's lifetime:
/// - the writer sends everything queued while it was busy in one write, then
///   parks until a command comes;
/// - the reader reads up to 64 KiB, parses every complete reply of it, records
///   their results under one lock and resumes their callers after it; in
///   subscriber mode it awaits
///   `onMessage` for each message push, in order. It is the one that closes the
///   descriptor, after the writer ended.
///
/// Promises: nothing resumes a continuation or calls a handler under a lock (a result
/// is put in its `ReplySlot` under the state lock and the continuation taken out there,
/// the caller resumed after unlocking, and reading its result under the lock again; see
/// `scripts/tsan-suppressions.txt` for the one ThreadSanitizer report this hand-off
/// gets, inside the runtime's `resume`); every caller is resumed exactly once (with its
/// reply, its error reply, or a `RedisError`, `.cancelled` when its task is
/// cancelled while it waits); once closed, the socket is shut down at once and its
/// descriptor closed when both tasks have ended.
final class PipelineCore: Sendable {
    typealias Caller = ReplySlot
    typealias Writer = UnsafeContinuation<Void, Never>
    typealias State = PipelineState<Caller, Writer>
    typealias MessageHandler = @Sendable (RedisPush) async -> Void

    /// Where one command's result meets its caller. Every field is read and written
    /// only inside `state`'s lock (that is the proof for `@unchecked Sendable`): the
    /// one who settles it records the result and takes the continuation there, and
    /// resumes it after unlocking; the caller, back, reads the result under the lock,
    /// which orders the settler's writes before its read in a way ThreadSanitizer
    /// sees too.
    final class ReplySlot: @unchecked Sendable {
        /// The waiting caller, until it is settled (nil before it parks).
        var continuation: UnsafeContinuation<Void, Never>?
        /// Set once: the reply, an error, or `.cancelled`.
        var result: Result<RedisValue, RedisError>?

        /// Under the lock: records `result` unless one is there already (a caller that
        /// was cancelled gets nothing more), and returns whom to resume after unlocking.
        func settle(_ result: Result<RedisValue, RedisError>) -> UnsafeContinuation<Void, Never>? {
            guard self.result == nil else { return nil }
            self.result = result
            return continuation.take()
        }
    }

    let connection: Connection
    let loop: EventLoop
    private let state: Locked<State>
    /// Set for a subscriber: pushes (messages, and `sunsubscribe`s nobody asked
    /// for) go here instead of to a caller.
    private let onMessage: MessageHandler?
    /// Writes and reads so far (tests check that commands share writes).
    let writes = Atomic<UInt64>(0)
    let reads = Atomic<UInt64>(0)

    init(connection: Connection, loop: EventLoop, limits: PipelineLimits = .standard, onMessage: MessageHandler?) {
        self.connection = connection
        self.loop = loop
        self.state = Locked(State(limits: limits))
        self.onMessage = onMessage
    }

    /// Starts the writer and the reader; call once, right after init.
    func start() {
        let writer = Task(executorPreference: loop) { await self.runWriter() }
        Task(executorPreference: loop) {
            await self.runReader()
            await writer.value
            self.connection.close()
        }
    }

    var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Sends a command and waits for its `replies` replies (the last one is returned).
    /// A cancelled task stops waiting at once with `.cancelled` (before it is sent:
    /// nothing is sent); its reply, when it comes, is read and dropped. Not when
    /// `cancellable` is false: then the call is sent and answered as if not cancelled
    /// (a call made on behalf of other tasks too).
    /// `shardUnsubscribes`: the channels of a SUNSUBSCRIBE (its replies are told
    /// apart from the `sunsubscribe` pushes Redis Cluster sends unasked).
    /// `asking`: `ASKING` goes first, in the same write and the same entry (its reply
    /// counts as one more; an error of either is the call's error, after both came),
    /// so no other caller's command comes between them.
    nonisolated(nonsending) func command(_ arguments: RedisArguments, replies: Int = 1, shardUnsubscribes: Set<[UInt8]> = [],
                                         asking: Bool = false, cancellable: Bool = true,
                                         timeout: Duration) async throws(RedisError) -> RedisValue {
        precondition(arguments.count > 0, "a Redis command needs at least its name")
        precondition(!asking || replies == 1, "ASKING precedes a command of one reply")
        let deadline = ContinuousClock.now + timeout
        let slot = ReplySlot()
        let command = EncodedCommand(arguments: arguments, afterAsking: asking)
        nonisolated(nonsending) func sendAndPark() async {
            await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
                let wake: (writer: Writer?, caller: UnsafeContinuation<Void, Never>?) = state.withLock { state in
                    // Cancelled before it parked: nothing is sent.
                    guard slot.result == nil else { return (nil, continuation) }
                    slot.continuation = continuation
                    switch state.enqueue(command, replies: asking ? 2 : replies, deadline: deadline,
                                         shardUnsubscribes: shardUnsubscribes, separateCommands: asking,
                                         caller: slot) {
                    case .none: return (nil, nil)
                    case .resumeWriter(let writer): return (writer, nil)
                    case .fail(_, let error): return (nil, slot.settle(.failure(error)))
                    }
                }
                wake.writer?.resume()
                wake.caller?.resume()
            }
        }
        if cancellable {
            await withTaskCancellationHandler {
                await sendAndPark()
            } onCancel: {
                state.withLock { _ in slot.settle(.failure(.cancelled)) }?.resume()
            }
        } else {
            await sendAndPark()
        }
        // Settled, always: whoever resumed this task recorded the result first.
        return try state.withLock { _ in slot.result! }.get()
    }

    func onClose(_ handler: @escaping @Sendable (RedisConnectionEnd) -> Void) {
        if let end = state.withLock({ $0.onClose(handler) }) { handler(end) }
    }

    /// Closes (once) `because`: pending callers fail with `.closed` (the first with
    /// `firstError`), the socket is shut down, the close handlers run.
    func close(failingFirstWith firstError: RedisError = .closed, because end: RedisConnectionEnd = .closedHere) {
        settle { $0.close(failingFirstWith: firstError, because: end) }
    }

    /// Runs `decide` under the lock and records there the failures of the callers a
    /// closing fails; then, unlocked, shuts the socket down, resumes the writer and
    /// those callers, and runs the close handlers.
    private func settle(_ decide: (inout State) -> State.Closing?) {
        let settled = state.withLock { state -> (State.Closing, [UnsafeContinuation<Void, Never>])? in
            guard let closing = decide(&state) else { return nil }
            return (closing, closing.callers.compactMap { slot, error in slot.settle(.failure(error)) })
        }
        guard let (closing, callers) = settled else { return }
        connection.abort()
        closing.writer?.resume()
        for caller in callers { caller.resume() }
        for handler in closing.handlers { handler(closing.end) }
    }

    private func runWriter() async {
        var buffer: [UInt8] = []
        let keptCapacity = state.withLock { $0.limits.keptWriteCapacity }
        while true {
            if buffer.capacity > keptCapacity { buffer = [] } else { buffer.removeAll(keepingCapacity: true) }
            switch state.withLock({ $0.takeOutgoing(into: &buffer) }) {
            case .stop:
                return
            case .idle:
                // Resumed after the lock is released; the next `takeOutgoing` takes it
                // again, which orders whoever woke it before what it writes. No
                // cancellation to handle: the writer ends when the pipeline closes.
                await withUnsafeContinuation { (writer: Writer) in
                    if !state.withLock({ $0.parkWriter(writer) }) { writer.resume() }
                }
            case .write:
                writes.add(1, ordering: .relaxed)
                do {
                    try await connection.write([buffer])
                } catch {
                    close(because: .socketFailed)
                    return
                }
            }
        }
    }

    private func runReader() async {
        let limits = state.withLock { $0.limits }
        let parser = ReplyReader(maxBuffered: limits.maxReplyBytes)
        var replies: [Reply] = []
        var resumptions: [(Caller, Result<RedisValue, RedisError>)] = []
        var callers: [UnsafeContinuation<Void, Never>] = []
        // Read when a deadline had passed, before judging it: handled first, then judged.
        var waiting: [UInt8]?
        while let deadline = state.withLock({ $0.readDeadline(now: .now) }) {
            let bytes: [UInt8]
            let judgeAfter = waiting != nil
            if let taken = waiting.take() {
                bytes = taken
            } else {
                do {
                    bytes = try await connection.read(maxBytes: limits.readChunk, deadline: deadline)
                } catch IOWaitError.timedOut {
                    waiting = await readBeforeJudging(limits.readChunk)
                    continue
                } catch {
                    close(because: .socketFailed)
                    break
                }
            }
            if bytes.isEmpty {
                close(because: .endedByRedis)
                break
            }
            reads.add(1, ordering: .relaxed)
            var failure: RedisError?
            do throws(RedisError) {
                try parser.feed(bytes)
                while let reply = try parser.next() { replies.append(reply) }
            } catch {
                failure = error
            }
            await deliver(&replies, resumptions: &resumptions, callers: &callers)
            if let failure {
                close(failingFirstWith: failure, because: .unreadable("\(failure)"))
                break
            }
            if judgeAfter {
                settle { $0.expire(now: .now) }
            } else {
                waiting = await readBeforeJudging(limits.readChunk)
            }
        }
        close()
    }

    /// When a deadline has passed, what already came is read (and returned, to be handled
    /// before the deadline is judged); when nothing waits, it is judged now: the connection
    /// closes. Nil when nothing came (or no deadline had passed). A loop kept busy elsewhere
    /// past a deadline thus does not take a reply waiting in the socket for one that never
    /// came; one more read at most, so a stream of pushes cannot put the judgement off.
    private func readBeforeJudging(_ chunk: Int) async -> [UInt8]? {
        guard state.withLock({ $0.hasPassedDeadline(now: .now) }) else { return nil }
        do {
            return try await connection.read(maxBytes: chunk, deadline: .now)
        } catch IOWaitError.timedOut {
            settle { $0.expire(now: .now) }
        } catch {
            close(because: .socketFailed)
        }
        return nil
    }

    /// Hands `replies` to their callers (one lock for a run of replies, the callers
    /// resumed after it) and, in subscriber mode, pushes to `onMessage`, all in
    /// arrival order. Whether a `sunsubscribe` is a reply or a push is decided under
    /// the lock, by what the oldest caller awaits at that point of the stream.
    private func deliver(_ replies: inout [Reply], resumptions: inout [(Caller, Result<RedisValue, RedisError>)],
                         callers: inout [UnsafeContinuation<Void, Never>]) async {
        var start = 0
        while start < replies.count {
            // The run of replies up to the next push (all of them without onMessage).
            let (end, push, closing) = state.withLock { state -> (Int, RedisPush?, State.Closing?) in
                var run: (Int, RedisPush?, State.Closing?)?
                var end = start
                while end < replies.count {
                    if onMessage != nil,
                       let push = RedisPush(replies[end], awaitedShardUnsubscribe: state.awaitsShardUnsubscribe(of:)) {
                        run = (end, push, nil)
                        break
                    }
                    if let closing = state.receive(replies[end], into: &resumptions) {
                        run = (replies.count, nil, closing)
                        break
                    }
                    end += 1
                }
                for (slot, result) in resumptions {
                    if let caller = slot.settle(result) { callers.append(caller) }
                }
                return run ?? (end, nil, nil)
            }
            for caller in callers { caller.resume() }
            callers.removeAll(keepingCapacity: true)
            resumptions.removeAll(keepingCapacity: true)
            if let closing { settle { _ in closing } }
            if let push, let onMessage, isOpen {
                await onMessage(push)
            }
            start = end + 1
        }
        replies.removeAll(keepingCapacity: true)
    }
}
