import HTTPCore

/// One command connection to Redis: many concurrent callers, commands pipelined
/// (everything queued while a write is in flight goes out in the next single
/// write), replies matched to callers in FIFO order.
///
/// Promises:
/// - every `command` returns or throws within its `timeout` (plus up to 200 ms:
///   the reader's check interval and the loop's tick). A reply that does not come
///   in time closes the connection: a FIFO pipeline cannot skip a reply. That
///   call throws `.timedOut` (`.closed` when that read finds Redis closed the
///   connection), every other pending call `.closed`. A deadline is judged after
///   one more read of what has come, so a reply that waited in the socket while
///   the reader was busy (a subscriber's slow `onPush`) is not late.
/// - an error reply throws `.server(message)` and the connection stays usable;
///   `.timedOut` from a full pipeline (100,000 pending commands or 64 MiB unsent)
///   leaves it open too; every other error means it is closed.
/// - a cancelled caller stops waiting at once with `.cancelled` (before its command
///   was written: nothing is sent); a reply still on its way is read and dropped, and
///   the connection goes on. `commandIgnoringCancellation` waits for its reply
///   regardless, within its timeout.
/// - `onClose` handlers run once, when the connection is closed or lost, told why
///   (`RedisConnectionEnd`).
/// - bounded: at most 100,000 pending commands, 64 MiB of unsent commands, a
///   64 KiB read buffer and 64 MiB for one reply being assembled.
/// - dropping the last reference closes the connection.
///
/// Not for SUBSCRIBE: use `RedisSubscriber`.
public final class RedisConnection: Sendable {
    let core: PipelineCore

    private init(core: PipelineCore) {
        self.core = core
    }

    deinit {
        core.close()
    }

    /// Connects within `timeout`: TCP, then AUTH (user and password, or password
    /// alone) and SELECT when the database is not 0. `host` may be numeric IPv4 or
    /// IPv6, `localhost`, or a name resolved by `getaddrinfo` on a Dispatch queue
    /// (never on the loop or the cooperative pool) within the same timeout.
    /// - Throws: only `.unreachable(reason)`.
    public static func connect(to url: RedisURL, timeout: Duration,
                               loop: EventLoop = .shared) async throws(RedisError) -> RedisConnection {
        RedisConnection(core: try await Connecting.open(url, timeout: timeout, loop: loop, onMessage: nil))
    }

    /// Sends one command (its name and arguments, binary-safe) and returns its reply.
    /// - Throws: `.server(message)` for an error reply; `.timedOut`, `.closed`,
    ///   `.protocolError` as the type says.
    public nonisolated(nonsending) func command(_ arguments: RedisArguments, timeout: Duration) async throws(RedisError) -> RedisValue {
        try await core.command(arguments, timeout: timeout)
    }

    /// `command`, sent and answered even if the calling task is cancelled (for a call
    /// made on behalf of other tasks too: a batch of publishes). Throws as `command`,
    /// never `.cancelled`.
    public nonisolated(nonsending) func commandIgnoringCancellation(_ arguments: RedisArguments, timeout: Duration) async throws(RedisError) -> RedisValue {
        try await core.command(arguments, cancellable: false, timeout: timeout)
    }

    /// `command` with byte arguments.
    public func command(_ arguments: [[UInt8]], timeout: Duration) async throws(RedisError) -> RedisValue {
        try await core.command(RedisArguments(arguments), timeout: timeout)
    }

    /// `command` with UTF-8 arguments.
    public func command(_ arguments: [String], timeout: Duration) async throws(RedisError) -> RedisValue {
        try await core.command(RedisArguments(arguments), timeout: timeout)
    }

    /// False once closed or lost (it never opens again: connect anew).
    public var isOpen: Bool { core.isOpen }

    /// Runs `handler` once when the connection is closed or lost, told why; at once if it already is.
    public func onClose(_ handler: @escaping @Sendable (RedisConnectionEnd) -> Void) {
        core.onClose(handler)
    }

    /// Runs `handler` once when the connection is closed or lost; at once if it already is.
    public func onClose(_ handler: @escaping @Sendable () -> Void) {
        core.onClose { _ in handler() }
    }

    /// Writes and reads of the socket so far (for tests of the batching).
    var ioCounts: (writes: UInt64, reads: UInt64) {
        (core.writes.load(ordering: .relaxed), core.reads.load(ordering: .relaxed))
    }

    /// Closes the connection; pending calls fail with `.closed`. Idempotent.
    public func close() {
        core.close()
    }
}
