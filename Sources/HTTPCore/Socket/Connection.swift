import CStreamsSSL
import Glibc
import Locking
import Synchronization

/// A connected, non-blocking TCP socket registered with the event loop,
/// optionally carrying TLS.
///
/// Promises: one task may read while another writes; the descriptor is closed
/// exactly once (by `close`, or by `deinit` as a safety net); `abort` may be
/// called from any thread at any time and never touches a descriptor number
/// that has been closed and reused. With TLS, `read` and `write` carry
/// plaintext exactly as without it (see `Connection+TLS.swift`), so the code
/// above cannot tell the difference once `handshake` has returned.
public final class Connection: Sendable {
    /// The socket's descriptor (for logs and tests; never close it directly).
    public let fd: Int32
    let registration: LoopRegistration
    let loop: EventLoop
    let counters: ConnectionCounters?
    /// The TLS session, when this connection speaks TLS; owned here and
    /// closed (close_notify, then freed) before the descriptor.
    let tls: TLSSession?
    /// Guards the descriptor's life: `abort` shuts it down only while open.
    private let lifecycle = Locked(Lifecycle.open)
    /// Whether a server has this connection waiting for its next request or its TLS
    /// handshake: what the server's shutdown closes at once. Set and cleared by the
    /// server's request loop (`HTTPServer.enterIdle`), read by its `shutdown`.
    let awaitingRequest = Atomic<Bool>(false)
    /// Set while `withOneCancellationHandler` runs: this connection's waits then leave
    /// cancellation to its handler. A property of the connection, not of a task: that is
    /// why no other task may wait on the connection meanwhile (the server's request phase
    /// is one task; the stream phase and HTTP/2 begin after it, with the flag cleared).
    private let cancelledByOneHandler = Atomic<Bool>(false)

    private enum Lifecycle {
        case open
        case closed
    }

    /// Takes ownership of `fd`. With `tls`, the connection speaks TLS on it
    /// (as a server or a client, as the context says; a client sends and
    /// checks `serverName`); `handshake` must run before the first read.
    /// - Throws: `SystemError` (`ENOMEM` when OpenSSL cannot make a session);
    ///   `fd` is closed then.
    init(adopting fd: Int32, loop: EventLoop, counters: ConnectionCounters?,
         tls context: TLSContext? = nil, serverName: String? = nil, offersHTTP2: Bool = false) throws(SystemError) {
        self.fd = fd
        self.loop = loop
        self.counters = counters
        do {
            registration = try loop.register(fd)
        } catch {
            Syscall.close(fd)
            throw error
        }
        guard let context else {
            tls = nil
            return
        }
        do {
            tls = try TLSSession(context: context, fd: fd, serverName: serverName, offersHTTP2: offersHTTP2)
        } catch {
            loop.deregister(registration)
            Syscall.close(fd)
            throw SystemError(call: "SSL_new", errno: ENOMEM)
        }
    }

    deinit {
        close()
    }

    /// Opens a client connection (used by tests and the load tool); with
    /// `tls`, also completes the TLS handshake (by `deadline`, or within 10 s).
    /// - Throws: `SystemError`, `IOWaitError.timedOut`, `TLSError.handshake`
    ///   (e.g. a certificate that does not verify).
    public static func connect(to address: SocketAddress, loop: EventLoop = .shared,
                               deadline: ContinuousClock.Instant? = nil,
                               tls: TLSClientContext? = nil) async throws -> Connection {
        let fd = try Syscall.tcpSocket(family: address.family)
        let connection = try Connection(adopting: fd, loop: loop, counters: nil,
                                        tls: tls?.context, serverName: tls?.serverName,
                                        offersHTTP2: tls?.offersHTTP2 ?? false)
        if case .wouldBlock = try Syscall.connect(fd, address) {
            try await loop.wait(for: .write, on: connection.registration, deadline: .from(deadline))
            let pending = try Syscall.pendingError(fd)
            if pending != 0 { throw SystemError(call: "connect", errno: pending) }
        }
        try? Syscall.setOption(fd, level: Int32(IPPROTO_TCP), name: TCP_NODELAY, value: 1)
        if tls != nil { try await connection.handshake(deadline: deadline ?? .now + .seconds(10)) }
        return connection
    }

    /// Runs `body` under one cancellation handler that ends every wait of this
    /// connection, instead of one handler per wait (their add and remove, and the
    /// executor switch around them, cost about 3 % of a publish request). Only for a
    /// body whose waits on this connection are all made by the calling task: its
    /// cancellation then ends them (a wait parked when it comes is resumed by the
    /// handler, a later one sees the task cancelled when it parks).
    nonisolated(nonsending) func withOneCancellationHandler<Result>(
        _ body: nonisolated(nonsending) () async -> Result) async -> Result {
        cancelledByOneHandler.store(true, ordering: .relaxed)
        defer { cancelledByOneHandler.store(false, ordering: .relaxed) }
        return await withTaskCancellationHandler {
            await body()
        } onCancel: {
            self.loop.cancelWaits(on: self.registration)
        }
    }

    var waitsCancelledByCaller: Bool { cancelledByOneHandler.load(ordering: .relaxed) }

    /// Reads what is available, waiting for readiness if nothing is. An empty
    /// result means the peer closed its side (EOF).
    /// - Throws: `IOWaitError.timedOut` past `deadline`, `SystemError` (e.g. reset), `CancellationError`,
    ///   `TLSError.protocolFailure` (a corrupt record).
    public nonisolated(nonsending) func read(maxBytes: Int = 4096, deadline: ContinuousClock.Instant? = nil) async throws -> [UInt8] {
        try await read(maxBytes: maxBytes, until: .from(deadline))
    }

    /// `read`, by a `LoopDeadline` (what the server's request loop passes: no instant in
    /// an async frame, see `LoopDeadline`).
    nonisolated(nonsending) func read(maxBytes: Int, until deadline: LoopDeadline?) async throws -> [UInt8] {
        if let tls { return try await read(tls, maxBytes: maxBytes, until: deadline) }
        return try await socketRead(maxBytes: maxBytes, until: deadline)
    }

    /// `read` for a caller whose previous read on this connection returned less than it
    /// asked for, so the socket was left empty: waits for readability first, saving the
    /// attempt that would only say `EAGAIN` (and its buffer). Readiness is edge-triggered
    /// and every arrival after that read is an edge, so nothing that arrived is waited
    /// past. Over TLS (records may sit decrypted in the session) or once the peer hung up
    /// (its edge may already be consumed), the same as `read`.
    nonisolated(nonsending) func readAfterDrain(maxBytes: Int, until deadline: LoopDeadline?) async throws -> [UInt8] {
        if tls == nil && !loop.isHungUp(registration) {
            try await loop.wait(for: .read, on: registration, deadline: deadline,
                                cancelledByCaller: waitsCancelledByCaller)
        }
        return try await read(maxBytes: maxBytes, until: deadline)
    }

    /// `read` on the socket itself, bypassing TLS.
    nonisolated(nonsending) func socketRead(maxBytes: Int, until deadline: LoopDeadline?) async throws -> [UInt8] {
        while true {
            if let bytes = try readAvailable(maxBytes: maxBytes) { return bytes }
            try await loop.wait(for: .read, on: registration, deadline: deadline,
                                cancelledByCaller: waitsCancelledByCaller)
        }
    }

    /// One non-blocking read; nil when it would block. Synchronous, so the
    /// buffer never lives across a wait (an idle connection holds none).
    ///
    /// On the loop's thread the read lands in the loop's `LoopReadBuffer` (elsewhere in
    /// a temporary allocation), and the result is an array of exactly what came:
    /// `[UInt8](unsafeUninitializedCapacity:)` allocates through the standard library's
    /// unspecialized path, which looks up the array's type metadata on every call (about
    /// 800 instructions of a 36,000-instruction publish request, issue 27), and held a
    /// 4 KiB buffer for a request of 150 bytes.
    private func readAvailable(maxBytes: Int) throws -> [UInt8]? {
        let buffer = loop.readBuffer
        if maxBytes <= buffer.count && loop.isLoopThread {
            return try buffer.withBytes(maxBytes) { scratch throws(SystemError) in try readAvailable(into: scratch) }
        }
        return try withUnsafeTemporaryAllocation(byteCount: maxBytes, alignment: 1) { scratch throws(SystemError) in
            try readAvailable(into: scratch)
        }
    }

    private func readAvailable(into scratch: UnsafeMutableRawBufferPointer) throws(SystemError) -> [UInt8]? {
        guard case .processed(let count) = try Syscall.read(fd, scratch) else { return nil }
        return [UInt8](UnsafeRawBufferPointer(rebasing: scratch[0..<count]))
    }

    /// Writes every byte of `chunks` in order, with as few `writev` calls as the
    /// socket allows (partial writes resume where they stopped); over TLS, in
    /// records of up to 16 KiB gathered from the chunks.
    public nonisolated(nonsending) func write(_ chunks: [[UInt8]], deadline: ContinuousClock.Instant? = nil) async throws {
        var position = WritePosition(chunks: chunks)
        try await write(chunks, from: &position, until: .from(deadline))
    }

    /// `write`, from `position` on (where `writeAvailable` stopped): every byte not
    /// written yet, waiting for readiness as often as needed.
    nonisolated(nonsending) func write(_ chunks: [[UInt8]], from position: inout WritePosition,
               until deadline: LoopDeadline? = nil) async throws {
        while true {
            switch try writeAvailable(chunks, at: &position) {
            case .done: return
            case .blocked(let interest):
                try await loop.wait(for: interest, as: .writer, on: registration, deadline: deadline,
                                cancelledByCaller: waitsCancelledByCaller)
            }
        }
    }

    /// What a write that never waits achieved.
    enum WriteProgress: Equatable {
        /// Every byte is written.
        case done
        /// The socket (or TLS, which may need to read) would block: the rest waits
        /// for this readiness. Over TLS the next attempt must start at the same
        /// position, as OpenSSL requires of a retried write.
        case blocked(Interest)
    }

    /// Writes what the socket takes now, from `position` on, and never waits:
    /// `writev` (or TLS records) until done or the socket would block. Synchronous,
    /// so the event loop can write a stream's frames itself at the end of a turn.
    /// - Throws: `SystemError` (e.g. the peer reset), `TLSError`, `IOWaitError.closed`.
    func writeAvailable(_ chunks: [[UInt8]], at position: inout WritePosition) throws -> WriteProgress {
        if let tls { return try writeAvailable(tls, chunks, at: &position) }
        return try socketWriteAvailable(chunks, at: &position)
    }

    /// `writeAvailable` on the socket itself, bypassing TLS.
    private func socketWriteAvailable(_ chunks: [[UInt8]], at position: inout WritePosition) throws -> WriteProgress {
        while !position.isDone {
            switch try writevOnce(chunks: chunks, from: position.index, offset: position.offset) {
            case .processed(let count):
                position.advance(by: count)
            case .wouldBlock:
                return .blocked(.write)
            }
        }
        return .done
    }

    /// `write` on the socket itself, bypassing TLS.
    nonisolated(nonsending) func socketWrite(_ chunks: [[UInt8]], until deadline: LoopDeadline?) async throws {
        var position = WritePosition(chunks: chunks)
        while try socketWriteAvailable(chunks, at: &position) != .done {
            try await loop.wait(for: .write, on: registration, deadline: deadline,
                                cancelledByCaller: waitsCancelledByCaller)
        }
    }

    public nonisolated(nonsending) func write(_ bytes: [UInt8], deadline: ContinuousClock.Instant? = nil) async throws {
        try await write([bytes], deadline: deadline)
    }

    /// Runs `handler` once when the peer goes away (FIN, reset, error) or the
    /// connection is aborted, even while no task reads — the way a stream
    /// that only writes learns its client vanished. At once if already gone.
    public func onPeerClosed(_ handler: @escaping @Sendable () -> Void) {
        loop.onHangUp(registration, handler)
    }

    /// Whether the peer hung up or the connection was aborted.
    public var isPeerClosed: Bool { loop.isHungUp(registration) }

    /// Shuts the socket down in both directions and wakes every waiting task;
    /// later reads see EOF and writes fail. Safe from any thread, any time.
    public func abort() {
        let wasOpen = lifecycle.withLock { state -> Bool in
            guard case .open = state else { return false }
            Syscall.shutdown(fd)
            return true
        }
        if wasOpen { loop.markHungUp(registration) }
    }

    /// Sends a FIN after what was written (the peer reads EOF) while this
    /// side can still read. Safe from any thread, any time.
    func finishWriting() {
        lifecycle.withLock { state in
            if case .open = state { Syscall.shutdownWrite(fd) }
        }
    }

    /// Sends a reset instead of a graceful FIN when closed (tests of abrupt clients).
    public func setResetOnClose() {
        try? Syscall.setLinger(fd, onSeconds: 0)
    }

    /// Ends TLS (a close_notify if the socket takes it at once), deregisters
    /// and closes the descriptor; later calls do nothing.
    public func close() {
        tls?.close()
        let wasOpen = lifecycle.withLock { state -> Bool in
            guard case .open = state else { return false }
            state = .closed
            return true
        }
        guard wasOpen else { return }
        // Once `.closed`, nothing else touches the descriptor through the lifecycle
        // (`abort`, `finishWriting`), so it is let go after the lock: deregistering
        // resumes the waiting tasks, which must not happen under it. Deregistered
        // before closed: the number may be reused by the next accept at once.
        loop.deregister(registration)
        Syscall.close(fd)
        counters?.open.subtract(1, ordering: .relaxed)
    }
}

/// Counters shared by every connection of a server, readable without locks.
public final class ConnectionCounters: Sendable {
    /// Connections open now.
    public let open = Atomic<Int>(0)
    /// Connections accepted since start.
    public let accepted = Atomic<UInt64>(0)
    /// Connections refused (over the cap, or while descriptors ran out).
    public let refused = Atomic<UInt64>(0)
    /// Connections refused because their address had `maxConnectionsPerAddress` open.
    public let refusedPerAddress = Atomic<UInt64>(0)
    /// Accepts deferred because descriptors ran out (each followed by a back-off).
    public let acceptBackoffs = Atomic<UInt64>(0)
    /// Bytes written to all sockets (over TLS: the encrypted bytes, handshakes included).
    public let bytesWritten = Atomic<UInt64>(0)
    /// TLS connections that ended before their handshake completed (bad or
    /// plain-HTTP ClientHello, a client that stalled past the header timeout
    /// or went away, a certificate the client refused).
    public let tlsHandshakeFailures = Atomic<UInt64>(0)
    /// Batches of a pumped stream that the socket did not take at once, so the
    /// stream's task waited for writability to write the rest (a subscriber reading
    /// slower than it is sent to).
    public let streamWritesBlocked = Atomic<UInt64>(0)
    /// HTTP/2 connections, streams and GOAWAYs.
    public let http2 = HTTP2Counters()

    public init() {}
}
