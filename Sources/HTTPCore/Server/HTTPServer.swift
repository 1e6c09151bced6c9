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
    /// The listening socket (the accept loop is in `HTTPServer+Accept.swift`).
    let listener: Listener
    /// The lifecycle and the connections shutdown must reach (`HTTPServerState.swift`).
    private let state = Locked(ServerState())
    /// Set once, by `shutdown()`: read without the lock by every request and every wait
    /// for one (a server-wide lock there was contended between loops).
    private let shuttingDown = Atomic<Bool>(false)
    /// Open connections per client address (used with `maxConnectionsPerAddress`).
    let addressCounts = AddressCounts()
    let onAcceptError: @Sendable (SystemError) -> Void

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

    /// Stops accepting and closes idle connections. Harmless to call twice.
    ///
    /// Why no idle connection is missed: a connection about to wait sets its
    /// `awaitingRequest` and then reads `shuttingDown` (`enterIdle`); shutdown sets
    /// `shuttingDown` and then reads each `awaitingRequest`. All four are sequentially
    /// consistent, so at least one side sees the other's store: the connection closes
    /// itself, or shutdown aborts it.
    public func shutdown() {
        let (requestPhase, http2) = state.withLock { state -> ([Connection], [HTTP2Connection]) in
            guard state.handle(.shutdown) else { return ([], []) }
            shuttingDown.store(true, ordering: .sequentiallyConsistent)
            return (Array(state.requestPhase.values), Array(state.http2.values))
        }
        listener.close()
        for connection in http2 { connection.goAway() }
        for connection in requestPhase where connection.awaitingRequest.load(ordering: .sequentiallyConsistent) {
            connection.abort()
        }
    }

    /// Sends each HTTP/2 connection open now a `GOAWAY` (no new streams on it) and
    /// goes on serving: a drain's first step, so shutdown's `GOAWAY` comes before any
    /// stream ends. Harmless to call again (a session sends one `GOAWAY`).
    public func goAwayHTTP2() {
        let http2 = state.withLock { Array($0.http2.values) }
        for connection in http2 { connection.goAway() }
    }

    var isShuttingDown: Bool {
        shuttingDown.load(ordering: .sequentiallyConsistent)
    }

    /// Lists a connection for shutdown while it is in its request phase (once per
    /// connection); false when shutting down.
    func enterRequestPhase(_ connection: Connection) -> Bool {
        state.withLock { state in
            guard state.acceptsConnections else { return false }
            state.requestPhase[connection.fd] = connection
            return true
        }
    }

    func leaveRequestPhase(_ connection: Connection) {
        state.withLock { state in
            if state.requestPhase[connection.fd] === connection { state.requestPhase[connection.fd] = nil }
        }
    }

    /// Marks a connection (listed by `enterRequestPhase`) as waiting for a request, which
    /// shutdown closes at once; false when shutting down. No lock: two atomics, see
    /// `shutdown()`.
    func enterIdle(_ connection: Connection) -> Bool {
        connection.awaitingRequest.store(true, ordering: .sequentiallyConsistent)
        guard !isShuttingDown else {
            connection.awaitingRequest.store(false, ordering: .relaxed)
            return false
        }
        return true
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
        connection.awaitingRequest.store(false, ordering: .relaxed)
    }

    /// Enters `running`; false when `run()` must not serve (shut down already, or twice).
    func enterRunning() -> Bool {
        state.withLock { $0.handle(.start) }
    }

    /// Enters `stopped`: the accept loop and every connection ended.
    func enterStopped() {
        state.withLock { _ = $0.handle(.finished) }
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
