import HTTPCore
import Locking
import Synchronization

/// The storage behind `RedisConnection` and `RedisSubscriber`: one socket, the
/// pipeline's state under a lock, and the connection's two tasks, both on the
/// event loop for the connection's lifetime:
/// - the writer sends everything queued while it was busy in one write, then
///   parks until a command comes;
/// - the reader reads up to 64 KiB, parses every complete reply of it, and
///   resumes their callers under one lock; in subscriber mode it awaits
///   `onMessage` for each message push, in order. It is the one that closes the
///   descriptor, after the writer ended.
///
/// Promises: nothing resumes a continuation or calls a handler under the lock;
/// every caller is resumed exactly once (with its reply, its error reply, or a
/// `RedisError`); once closed, the socket is shut down at once and its
/// descriptor closed when both tasks have ended.
final class PipelineCore: Sendable {
    typealias Caller = UnsafeContinuation<Result<RedisValue, RedisError>, Never>
    typealias Writer = UnsafeContinuation<Void, Never>
    typealias State = PipelineState<Caller, Writer>
    typealias MessageHandler = @Sendable (RedisPush) async -> Void

    let connection: Connection
    let loop: EventLoop
    private let state: Locked<State>
    /// Continuations are resumed inside this lock, and a resumed task takes it once
    /// when it is back: the runtime orders the resumer's writes before the task's next
    /// step already, but ThreadSanitizer cannot see that (it reported the loop's write of
    /// a reply into a caller's frame racing the caller's read); it sees `Locked`. As
    /// `StreamPump` does with its lock. It guards a byte, not `()`: ThreadSanitizer counts
    /// `withLock`'s `&value` as a write, and an empty value's address is the next field's
    /// (it reported `onMessage` as raced).
    private let resumeFence = Locked<UInt8>(0)
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
    /// `shardUnsubscribes`: the channels of a SUNSUBSCRIBE (its replies are told
    /// apart from the `sunsubscribe` pushes Redis Cluster sends unasked).
    /// `asking`: `ASKING` goes first, in the same write and the same entry (its reply
    /// counts as one more; an error of either is the call's error, after both came),
    /// so no other caller's command comes between them.
    func command<A: CommandArgument>(_ arguments: [A], replies: Int = 1, shardUnsubscribes: Set<[UInt8]> = [],
                                     asking: Bool = false, timeout: Duration) async throws(RedisError) -> RedisValue {
        let deadline = ContinuousClock.now + timeout
        let result = await withUnsafeContinuation { (caller: Caller) in
            var action = State.EnqueueAction.fail(caller, .protocolError("out of memory encoding a command"))
            _ = CommandFormatter.format(arguments) { bytes in
                func enqueue(_ bytes: UnsafeRawBufferPointer, replies: Int) {
                    let bytes = EncodedCommand(bytes: bytes)
                    action = state.withLock {
                        $0.enqueue(bytes, replies: replies, deadline: deadline, shardUnsubscribes: shardUnsubscribes,
                                   separateCommands: asking, caller: caller)
                    }
                }
                if asking {
                    precondition(replies == 1, "ASKING precedes a command of one reply")
                    (Self.askingCommand + Array(bytes)).withUnsafeBytes { enqueue($0, replies: 2) }
                } else {
                    enqueue(bytes, replies: replies)
                }
            }
            switch action {
            case .none: break
            case .resumeWriter(let writer): resumeFence.withLock { _ in writer.resume() }
            case .fail(let caller, let error): resumeFence.withLock { _ in caller.resume(returning: .failure(error)) }
            }
        }
        resumeFence.withLock { _ in }
        return try result.get()
    }

    /// `ASKING` in RESP.
    private static let askingCommand: [UInt8] = Array("*1\r\n$6\r\nASKING\r\n".utf8)

    func onClose(_ handler: @escaping @Sendable () -> Void) {
        if state.withLock({ $0.onClose(handler) }) { handler() }
    }

    /// Closes (once): pending callers fail with `.closed` (the first with
    /// `firstError`), the socket is shut down, the close handlers run.
    func close(failingFirstWith firstError: RedisError = .closed) {
        perform(state.withLock { $0.close(failingFirstWith: firstError) })
    }

    private func perform(_ closing: State.Closing?) {
        guard let closing else { return }
        connection.abort()
        resumeFence.withLock { _ in
            closing.writer?.resume()
            for (caller, error) in closing.callers { caller.resume(returning: .failure(error)) }
        }
        for handler in closing.handlers { handler() }
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
                await withUnsafeContinuation { (writer: Writer) in
                    if !state.withLock({ $0.parkWriter(writer) }) { resumeFence.withLock { _ in writer.resume() } }
                }
                resumeFence.withLock { _ in }
            case .write:
                writes.add(1, ordering: .relaxed)
                do {
                    try await connection.write([buffer])
                } catch {
                    close()
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
        while let deadline = state.withLock({ $0.readDeadline(now: .now) }) {
            let bytes: [UInt8]
            do {
                bytes = try await connection.read(maxBytes: limits.readChunk, deadline: deadline)
            } catch IOWaitError.timedOut {
                perform(state.withLock { $0.expire(now: .now) })
                continue
            } catch {
                break
            }
            if bytes.isEmpty { break }
            reads.add(1, ordering: .relaxed)
            var failure: RedisError?
            do throws(RedisError) {
                try parser.feed(bytes)
                while let reply = try parser.next() { replies.append(reply) }
            } catch {
                failure = error
            }
            await deliver(&replies, resumptions: &resumptions)
            if let failure {
                close(failingFirstWith: failure)
                break
            }
            perform(state.withLock { $0.expire(now: .now) })
        }
        close()
    }

    /// Hands `replies` to their callers (one lock for a run of replies) and, in
    /// subscriber mode, pushes to `onMessage`, all in arrival order. Whether a
    /// `sunsubscribe` is a reply or a push is decided under the lock, by what the
    /// oldest caller awaits at that point of the stream.
    private func deliver(_ replies: inout [Reply], resumptions: inout [(Caller, Result<RedisValue, RedisError>)]) async {
        var start = 0
        while start < replies.count {
            // The run of replies up to the next push (all of them without onMessage).
            let (end, push, closing) = state.withLock { state -> (Int, RedisPush?, State.Closing?) in
                var end = start
                while end < replies.count {
                    if onMessage != nil,
                       let push = RedisPush(replies[end], awaitedShardUnsubscribe: state.awaitsShardUnsubscribe(of:)) {
                        return (end, push, nil)
                    }
                    if let closing = state.receive(replies[end], into: &resumptions) { return (replies.count, nil, closing) }
                    end += 1
                }
                return (end, nil, nil)
            }
            if !resumptions.isEmpty {
                resumeFence.withLock { _ in
                    for (caller, result) in resumptions { caller.resume(returning: result) }
                }
                resumptions.removeAll(keepingCapacity: true)
            }
            perform(closing)
            if let push, let onMessage, isOpen {
                await onMessage(push)
            }
            start = end + 1
        }
        replies.removeAll(keepingCapacity: true)
    }
}
