import Glibc
import Locking
import Synchronization

/// An HTTP/1.1 server on the event loop, speaking HTTPS when given a TLS
/// context (the handshake runs in the connection's task, within the header
/// timeout, before any HTTP is parsed). Each accepted connection runs as one
/// child task of `run()`'s task (through `ConnectionGroups`), so cancelling the
/// task running `run()` cancels every connection, and `run()` returns only when
/// all of them have ended (each closing its socket exactly once).
///
/// Graceful shutdown is separate from cancellation: `shutdown()` stops
/// accepting and closes connections that wait for a request; connections busy
/// with a request finish it and close; streaming bodies are the application's
/// to end (the gateway finishes its hub).
public final class HTTPServer: Sendable {
    public let configuration: HTTPServerConfiguration
    /// Open, accepted and refused connections, bytes written.
    public let counters: ConnectionCounters
    /// The certificate and key new connections get; nil serves plain HTTP.
    public let tls: TLSServerContext?
    let handler: HTTPHandler
    /// The loops connections are spread over: each connection waits on one and
    /// its task runs on that loop's thread. The first also holds the listener and
    /// runs the accept loop.
    public let loops: [EventLoop]
    /// The listener's loop (the first).
    public var loop: EventLoop { loops[0] }
    private let listener: Listener
    private let state = Locked(ServerState())
    /// Open connections per client address (used with `maxConnectionsPerAddress`).
    let addressCounts = AddressCounts()
    private let onAcceptError: @Sendable (SystemError) -> Void

    /// The server's lifecycle: `ready` (bound) → `running` (accepting) →
    /// `shuttingDown` (no new connections, idle ones closed) → `stopped` (the
    /// accept loop and every connection ended). `shutdown()` from `ready` or
    /// `running` goes straight to `shuttingDown`; a second `shutdown()` and a late
    /// `run()` do nothing. `ServerState.handle` lists every transition.
    enum Lifecycle {
        case ready
        case running
        case shuttingDown
        case stopped
    }

    enum LifecycleEvent {
        /// `run()` starts accepting.
        case start
        /// `shutdown()`.
        case shutdown
        /// The accept loop and every connection task ended.
        case finished
    }

    struct ServerState {
        var lifecycle = Lifecycle.ready
        /// Connections waiting for their next request, closed at once on shutdown.
        var idle: [Int32: Connection] = [:]
        /// HTTP/2 connections, sent a GOAWAY on shutdown.
        var http2: [Int32: HTTP2Connection] = [:]

        /// Applies `event`; true when it changed the lifecycle (false: nothing to do).
        mutating func handle(_ event: LifecycleEvent) -> Bool {
            switch (lifecycle, event) {
            case (.ready, .start):
                lifecycle = .running
            case (.ready, .shutdown), (.running, .shutdown):
                lifecycle = .shuttingDown
            case (.running, .finished), (.shuttingDown, .finished):
                lifecycle = .stopped
            case (.running, .start), (.shuttingDown, .start), (.stopped, .start),
                 (.shuttingDown, .shutdown), (.stopped, .shutdown):
                return false  // run() twice or after shutdown, shutdown twice: harmless
            case (.ready, .finished), (.stopped, .finished):
                preconditionFailure("illegal server transition: \(event) in \(lifecycle)")
            }
            return true
        }

        var acceptsConnections: Bool {
            switch lifecycle {
            case .ready, .running: return true
            case .shuttingDown, .stopped: return false
            }
        }
    }

    /// Binds the listening socket now, so `port` is known before `run()`.
    /// - Parameter loops: where connections run; each new one goes to the loop with
    ///   the fewest registered descriptors (`EventLoop.loops(n)` for n loops).
    public init(configuration: HTTPServerConfiguration, loops: [EventLoop] = [.shared],
                counters: ConnectionCounters = ConnectionCounters(),
                tls: TLSServerContext? = nil,
                onAcceptError: @escaping @Sendable (SystemError) -> Void = { _ in },
                handler: @escaping HTTPHandler) throws {
        guard let address = SocketAddress.resolve(host: configuration.host, port: configuration.port) else {
            throw HTTPServerError.badAddress(configuration.host)
        }
        self.configuration = configuration
        self.counters = counters
        self.tls = tls
        self.handler = handler
        self.onAcceptError = onAcceptError
        precondition(!loops.isEmpty, "a server needs an event loop")
        self.loops = loops
        listener = try Listener(address: address, backlog: configuration.backlog, loop: loops[0])
    }

    /// The bound port.
    public var port: Int { listener.port }

    /// The process's open-descriptor limit (soft, hard).
    public static var descriptorLimit: (soft: UInt64, hard: UInt64) { Syscall.descriptorLimit() }

    /// Accepts and serves connections until `shutdown()` (or cancellation),
    /// then waits for every connection task to end. Accepting and every
    /// connection run on the loop's thread (`EventLoop+Executor`).
    public func run() async {
        await withTaskExecutorPreference(loop) { await acceptAndServe() }
    }

    private func acceptAndServe() async {
        guard state.withLock({ $0.handle(.start) }) else { return }
        let reserveStart = Self.reserveStart(limit: Self.descriptorLimit.soft)
        let connections = ConnectionGroups()
        await connections.serve {
            var backoff = Self.firstBackoff
            // Set when the last accepted descriptor reached the reserve: then
            // every accept first checks that a descriptor below it is free.
            var nearLimit = false
            var acceptedSinceYield = 0
            while !Task.isCancelled {
                if nearLimit {
                    if isShuttingDown { break }  // accept would say so; it is not called here
                    nearLimit = Self.lowestFreeDescriptor().map { $0 >= reserveStart } ?? true
                    if nearLimit {
                        // As out of descriptors: the client waits in the backlog.
                        counters.acceptBackoffs.add(1, ordering: .relaxed)
                        if backoff == Self.firstBackoff {
                            onAcceptError(SystemError(call: "descriptor reserve (\(Self.descriptorReserve)) reached", errno: EMFILE))
                        }
                        try? await Task.sleep(for: backoff)
                        backoff = min(backoff * 2, .seconds(1))
                        continue
                    }
                }
                let connection: Connection
                do {
                    connection = try await listener.accept(counters: counters, tls: tls, on: leastBusyLoop())
                    backoff = Self.firstBackoff
                    nearLimit = connection.fd >= reserveStart
                } catch let error as SystemError where error.isResourceExhaustion {
                    // Out of descriptors: the pending connection waits in the
                    // backlog; keep serving the open ones and try again later.
                    // Logged once per run of back-offs, not once per retry.
                    counters.acceptBackoffs.add(1, ordering: .relaxed)
                    if backoff == Self.firstBackoff { onAcceptError(error) }
                    try? await Task.sleep(for: backoff)
                    backoff = min(backoff * 2, .seconds(1))
                    continue
                } catch is SystemError {
                    continue  // e.g. ECONNABORTED: that client gave up; the next may not
                } catch {
                    break  // listener closed (shutdown) or the task was cancelled
                }
                if counters.open.load(ordering: .relaxed) > configuration.maxConnections {
                    counters.refused.add(1, ordering: .relaxed)
                    connections.start(on: connection.loop) { await self.refuse(connection) }
                } else if let limit = configuration.maxConnectionsPerAddress,
                          let address = AddressCounts.peerAddress(of: connection.fd) {
                    if addressCounts.admit(address, limit: limit) {
                        connections.start(on: connection.loop) {
                            await self.serve(connection)
                            self.addressCounts.release(address)
                        }
                    } else {
                        counters.refusedPerAddress.add(1, ordering: .relaxed)
                        connections.start(on: connection.loop) {
                            await self.refuse(connection, reason: "too many connections from your address, retry later")
                        }
                    }
                } else {
                    connections.start(on: connection.loop) { await self.serve(connection) }
                }
                // Behind the connection tasks just started, every few accepts: while
                // clients keep arriving, accept never returns "would block", and this
                // loop would otherwise accept faster than connections are served,
                // holding thousands of them (and their memory) in user space instead
                // of leaving the excess in the kernel's listen queue. Not after each
                // one: a yield waits for a whole turn of the loop, which a big fan-out
                // can make long.
                acceptedSinceYield += 1
                if acceptedSinceYield == Self.acceptsPerYield {
                    acceptedSinceYield = 0
                    await Task.yield()
                }
            }
            listener.close()
        }
        state.withLock { _ = $0.handle(.finished) }
    }

    /// The loop a new connection goes to: the one with the fewest registered
    /// descriptors. One acceptor choosing, rather than a `SO_REUSEPORT` listener per
    /// loop: the kernel spreads those by a hash of the client's address and port, so
    /// a few long-lived streams can land on one loop, and a second process could bind
    /// the same port without an error.
    private func leastBusyLoop() -> EventLoop {
        guard loops.count > 1 else { return loops[0] }
        var best = loops[0]
        var fewest = best.registeredDescriptors
        for loop in loops.dropFirst() {
            let count = loop.registeredDescriptors
            if count < fewest { (best, fewest) = (loop, count) }
        }
        return best
    }

    /// Connections accepted in a row before the accept loop lets them run.
    static let acceptsPerYield = 16

    /// The first pause after running out of descriptors; it doubles up to 1 s.
    static let firstBackoff = Duration.milliseconds(10)

    /// Descriptors the accept loop leaves free for everything else (a quarter
    /// of a tiny limit). The process must never run out: besides static files,
    /// libdispatch opens `/proc/<tid>/stat` once a second while work is queued
    /// and traps (killing the process) when that `open` fails with `EMFILE`.
    static let descriptorReserve = 32

    /// The first descriptor number of the reserve under `limit`.
    static func reserveStart(limit: UInt64) -> Int32 {
        let limit = Int64(clamping: limit)
        return Int32(clamping: limit - min(Int64(descriptorReserve), limit / 4))
    }

    /// The number the next new descriptor would get (the lowest free one), nil
    /// if none is free; probed with a throwaway eventfd.
    private static func lowestFreeDescriptor() -> Int32? {
        guard let probe = try? Syscall.eventFD() else { return nil }
        Syscall.close(probe)
        return probe
    }

    /// Stops accepting and closes idle connections. Harmless to call twice.
    public func shutdown() {
        let (idle, http2) = state.withLock { state -> ([Connection], [HTTP2Connection]) in
            guard state.handle(.shutdown) else { return ([], []) }
            defer { state.idle.removeAll() }
            return (Array(state.idle.values), Array(state.http2.values))
        }
        listener.close()
        for connection in http2 { connection.goAway() }
        for connection in idle { connection.abort() }
    }

    /// Sends each HTTP/2 connection open now a `GOAWAY` (no new streams on it) and
    /// goes on serving: a drain's first step, so shutdown's `GOAWAY` comes before any
    /// stream ends. Harmless to call again (a session sends one `GOAWAY`).
    public func goAwayHTTP2() {
        let http2 = state.withLock { Array($0.http2.values) }
        for connection in http2 { connection.goAway() }
    }

    var isShuttingDown: Bool {
        state.withLock { !$0.acceptsConnections }
    }

    /// Records a connection as waiting for a request; false when shutting down.
    func enterIdle(_ connection: Connection) -> Bool {
        state.withLock { state in
            guard state.acceptsConnections else { return false }
            state.idle[connection.fd] = connection
            return true
        }
    }

    /// Records an HTTP/2 connection for shutdown's GOAWAY; false when shutting down.
    func enterHTTP2(_ connection: HTTP2Connection) -> Bool {
        state.withLock { state in
            guard state.acceptsConnections else { return false }
            state.http2[connection.connection.fd] = connection
            return true
        }
    }

    func leaveHTTP2(_ connection: HTTP2Connection) {
        state.withLock { state in
            if state.http2[connection.connection.fd] === connection { state.http2[connection.connection.fd] = nil }
        }
    }

    func leaveIdle(_ connection: Connection) {
        state.withLock { state in
            if state.idle[connection.fd] === connection { state.idle[connection.fd] = nil }
        }
    }

    /// Answers `503` with `Retry-After` to a connection over the cap, then closes it
    /// (in HTTP/2 to a client that speaks it: `HTTPServer+HTTP2Refusal.swift`).
    private func refuse(_ connection: Connection, reason: String = "too many connections, retry later") async {
        defer { connection.close() }
        guard await establishTLS(on: connection, deadline: .now + .seconds(1)) else { return }
        if let initial = await http2Opening(of: connection) {
            return await refuseHTTP2(connection, initial: initial, reason: reason)
        }
        let answer = refusal(.serviceUnavailable, reason,
                             extra: ["Retry-After": "\(configuration.retryAfterSeconds)"])
        try? await connection.write(answer, deadline: .now + .seconds(1))
    }
}

/// Why a server could not start.
public enum HTTPServerError: Error, CustomStringConvertible {
    case badAddress(String)

    public var description: String {
        switch self {
        case .badAddress(let host): return "cannot resolve listen address '\(host)'"
        }
    }
}
