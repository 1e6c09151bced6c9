/// One connection's life, from accept to close, as a pure state machine over any
/// `Clock`: the per-connection task (`HTTPServer+Connection`) reports what
/// happened, the machine says what the state is now and by when the next read must
/// bring bytes. Tests drive it with a manual clock, without sockets or waiting.
///
/// ```
/// handshaking ──► idle ──► readingHead ──► readingBody ──► responding ──► idle (keep-alive)
///                   │           │  └──────────(no body)──────► │      └──► streaming ──► closed
///                   └───────────┴──► lingering (refused) ──► closed   └──► closed
/// ```
///
/// Deadlines (`HTTPServerConfiguration`): the TLS handshake and the first request's
/// head must start within `headerTimeout` of the connection; a later request's
/// first byte must come within `idleTimeout` of the previous response; a head must
/// be complete within `headerTimeout` of its first byte (the slowloris bound); each
/// read of a body must bring bytes within `bodyTimeout`. A read that times out
/// mid-request is answered `408`; an idle one just closes.
///
/// Owned by the connection's task; never shared. An event the current state cannot
/// take is a bug in the server and traps.
struct ConnectionLifecycle<C: Clock> where C.Duration == Duration {
    enum State: Equatable {
        /// The TLS handshake runs; it must end by `deadline`.
        case handshaking(deadline: C.Instant)
        /// No byte of the next request yet; close quietly at `deadline`.
        case idle(deadline: C.Instant)
        /// A request's head has started (or bytes wait unparsed); it must be whole by `deadline`.
        case readingHead(deadline: C.Instant)
        /// The head is in; each read of the body must bring bytes by `deadline`.
        case readingBody(deadline: C.Instant)
        /// A whole request is with the handler, or its response is being written.
        case responding
        /// A streaming response owns the connection until its body ends.
        case streaming
        /// A refusal was written; unread bytes are discarded for a moment before closing.
        case lingering
        case closed
    }

    /// What the connection's task saw.
    enum Event {
        /// The TLS handshake completed.
        case handshakeCompleted
        /// The task asks for the next request. `midRequest`: the parser already holds
        /// bytes of it (pipelined behind the previous one).
        case awaitingRequest(midRequest: Bool)
        /// A read brought bytes.
        case bytesArrived
        /// The parser has the head of a request with a body.
        case headParsed
        /// The parser has a whole request.
        case requestParsed
        /// A fixed response was written; `keepAlive` when another request may follow.
        case responded(keepAlive: Bool)
        /// The head of a streaming response was written; its body runs next.
        case streamStarted
        /// The request was refused (a parse error, a read timeout mid-request, plain HTTP on a TLS port).
        case refused
        /// The connection ends: EOF, an I/O error, a timeout while idle, the end of a stream, shutdown.
        case closed
    }

    /// The timeouts, as configured.
    struct Timeouts {
        var header: Duration
        var idle: Duration
        var body: Duration
    }

    private(set) var state: State
    let timeouts: Timeouts

    /// A connection accepted at `now`; over TLS it starts with the handshake.
    init(timeouts: Timeouts, tls: Bool, now: C.Instant) {
        self.timeouts = timeouts
        let deadline = now.advanced(by: timeouts.header)
        state = tls ? .handshaking(deadline: deadline) : .idle(deadline: deadline)
    }

    /// The deadline of the next read (or of the handshake); nil when nothing is read now.
    var readDeadline: C.Instant? {
        switch state {
        case .handshaking(let deadline), .idle(let deadline), .readingHead(let deadline), .readingBody(let deadline):
            return deadline
        case .responding, .streaming, .lingering, .closed:
            return nil
        }
    }

    /// Whether the connection waits for a request's first byte (shutdown may close it at once).
    var isIdle: Bool {
        if case .idle = state { return true }
        return false
    }

    /// Applies `event`, seen at `now`. `now` is read only by the transitions that set a
    /// deadline (two of a keep-alive request's four events): a read of the clock is about
    /// 100 instructions (issue 27).
    mutating func handle(_ event: Event, now: @autoclosure () -> C.Instant) {
        switch (state, event) {
        case (.handshaking, .handshakeCompleted):
            state = .idle(deadline: now().advanced(by: timeouts.header))
        case (.idle, .awaitingRequest(midRequest: false)):
            break  // the first request: its deadline runs from the connection (or handshake)
        case (.responding, .awaitingRequest(let midRequest)):
            state = midRequest
                ? .readingHead(deadline: now().advanced(by: timeouts.header))
                : .idle(deadline: now().advanced(by: timeouts.idle))
        case (.idle, .bytesArrived):
            state = .readingHead(deadline: now().advanced(by: timeouts.header))
        case (.readingHead, .bytesArrived):
            break  // the head's deadline is fixed from its first byte
        case (.readingHead, .headParsed), (.readingBody, .bytesArrived):
            state = .readingBody(deadline: now().advanced(by: timeouts.body))
        case (.readingHead, .requestParsed), (.readingBody, .requestParsed):
            state = .responding
        case (.responding, .responded(keepAlive: true)):
            break  // the next `awaitingRequest` says whether bytes of it are here
        case (.responding, .streamStarted):
            state = .streaming
        case (.handshaking, .refused), (.readingHead, .refused), (.readingBody, .refused):
            state = .lingering
        case (_, .closed), (.responding, .responded(keepAlive: false)):
            state = .closed
        default:
            preconditionFailure("illegal connection transition: \(event) in \(state)")
        }
    }
}

extension ConnectionLifecycle.Timeouts {
    /// The timeouts of `configuration`.
    init(_ configuration: HTTPServerConfiguration) {
        self.init(header: configuration.headerTimeout, idle: configuration.idleTimeout, body: configuration.bodyTimeout)
    }
}
