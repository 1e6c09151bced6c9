/// The server's own state: its lifecycle and the connections shutdown must reach.
extension HTTPServer {
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
        /// Connections in their request phase (TLS handshake, HTTP/1.1 requests), by
        /// descriptor: entered once per connection, not per request. Shutdown closes
        /// those whose `awaitingRequest` is set.
        var requestPhase: [Int32: Connection] = [:]
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
}
