/// The per-connection loop: read a request, answer it, repeat while the
/// connection may stay open. Short on purpose: the parser, the handler and
/// `ConnectionLifecycle` (the connection's states and deadlines) do the work.
extension HTTPServer {
    private static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    @inline(never)  // its own small frame, not merged into the connection's closure
    func serve(_ connection: Connection) async {
        defer { connection.close() }
        guard let body = await requestPhase(on: connection) else { return }
        // The request phase's frames and the task-allocator slabs they needed are
        // gone by now: a stream that lives for hours keeps only what it needs.
        let stream: ResponseStream
        switch body {
        case .pump(let pump):
            stream = pump.stream
            await pump.run()
        case .http2(let initial):
            return await serveHTTP2(on: connection, initial: initial)
        }
        await stream.finish(deadline: .now + .seconds(1))
    }

    /// The TLS handshake and the request loop, in a child task of the connection's
    /// task that ends before the stream starts. Why a child: the Swift runtime keeps
    /// a task's allocator slabs (about 1 KiB each) until the task ends, so the
    /// deepest chain of async frames a task ever reached stays with it. Parsing,
    /// routing and subscribing reach several slabs; run in the connection's own task
    /// they would stay with every idle subscriber for hours (issue 16,
    /// bench/memory.md). The child is structured: it is cancelled with the
    /// connection's task and awaited before the stream starts.
    @inline(never)  // so its frame (and the child's) is popped before the stream starts
    private func requestPhase(on connection: Connection) async -> StreamingBody? {
        async let body = handshakeAndServeRequests(on: connection)
        return await body
    }

    private func handshakeAndServeRequests(on connection: Connection) async -> StreamingBody? {
        guard enterRequestPhase(connection) else { return nil }
        defer { leaveRequestPhase(connection) }
        // All of this phase's waits are this task's: one cancellation handler for them all.
        return await connection.withOneCancellationHandler {
            await self.handshakeAndServeRequestsWithoutHandlers(on: connection)
        }
    }

    private nonisolated(nonsending) func handshakeAndServeRequestsWithoutHandlers(
        on connection: Connection) async -> StreamingBody? {
        var lifecycle = ConnectionLifecycle<LoopClock>(timeouts: .init(configuration), tls: connection.isTLS,
                                                             now: LoopClock().now)
        if case .handshaking(let deadline) = lifecycle.state {
            guard await establishTLS(on: connection, deadline: deadline.instant) else { return nil }
            Self.note(.handshakeCompleted, on: &lifecycle)
            if configuration.http2.enabled && connection.tlsALPNProtocol == "h2" { return .http2([]) }
        }
        return await serveRequests(on: connection, lifecycle: &lifecycle)
    }

    /// Serves requests until the connection closes (nil) or a streaming
    /// response takes it over. Complete replies gather in a `ReplyBatch` while the
    /// parser holds more requests of the same read (pipelining), and leave together.
    private nonisolated(nonsending) func serveRequests(on connection: Connection,
                               lifecycle: inout ConnectionLifecycle<LoopClock>) async -> StreamingBody? {
        var parser = HTTPRequestParser(limits: configuration.limits)
        var replies = ReplyBatch()
        var drained = false
        var preface: HTTP2PrefaceCheck = configuration.http2.enabled && !connection.isTLS ? .pending : .http1
        while !Task.isCancelled {
            guard let request = await nextRequest(on: connection, parser: &parser, replies: &replies, drained: &drained,
                                                  lifecycle: &lifecycle, preface: &preface) else {
                if case .http2(let initial) = preface { return .http2(initial) }
                return nil
            }
            let response = await handler(request)
            switch respond(to: request, with: response, on: connection, into: &replies) {
            case .keepAlive:
                Self.note(.responded(keepAlive: true), on: &lifecycle)
                if replies.isFull, await !flush(&replies, on: connection) { return nil }
            case .close:
                Self.note(.responded(keepAlive: false), on: &lifecycle)
                _ = await flush(&replies, on: connection)
                return nil
            case .stream(let body):
                // The replies before it go out first; a failed write ends the pump at its
                // first batch (which cancels the source).
                _ = await flush(&replies, on: connection)
                Self.note(.streamStarted, on: &lifecycle)
                return body
            }
        }
        _ = await flush(&replies, on: connection)  // what the socket takes now; cancelled, it does not wait
        return nil
    }

    /// Writes the replies waiting (nothing when there are none); false when the write
    /// failed and the connection must close. Inlined, as `ReplyBatch.flush`: a write the
    /// socket takes at once makes no task frame.
    @inline(__always)
    private nonisolated(nonsending) func flush(_ replies: inout ReplyBatch, on connection: Connection) async -> Bool {
        guard !replies.isEmpty else { return true }
        do {
            try await replies.flush(on: connection, deadline: .after(configuration.writeTimeout))
        } catch {
            return false
        }
        return true
    }

    /// Reads until the parser has a whole request, within the deadlines
    /// `lifecycle` sets. Nil when the connection should close (EOF, timeout,
    /// refusal already answered, shutdown). `drained` says whether the last read
    /// left the socket empty (it returned less than it asked for): the next read
    /// then waits for readability first, instead of a read that says `EAGAIN`.
    /// `replies` are written before it reads, writes anything else or lists the
    /// connection idle (where shutdown may close it).
    private nonisolated(nonsending) func nextRequest(on connection: Connection, parser: inout HTTPRequestParser,
                             replies: inout ReplyBatch, drained: inout Bool,
                             lifecycle: inout ConnectionLifecycle<LoopClock>,
                             preface: inout HTTP2PrefaceCheck) async -> HTTPRequest? {
        Self.note(.awaitingRequest(midRequest: parser.isMidRequest), on: &lifecycle)
        if !parser.isMidRequest {
            guard await flush(&replies, on: connection) else { return nil }
        }
        // Idle connections are listed, so that shutdown can close them at once.
        var listedIdle = lifecycle.isIdle
        if listedIdle && !enterIdle(connection) { return nil }
        defer { if listedIdle { leaveIdle(connection) } }
        while true {
            let event: HTTPParserEvent?
            do {
                event = try parser.next()
            } catch {
                Self.note(.refused, on: &lifecycle)
                await answerAndClose(error.status, error.reason, on: connection, after: &replies)
                return nil
            }
            switch event {
            case .request(let request):
                Self.note(.requestParsed, on: &lifecycle)
                return request
            case .head(let head):
                if head.expectsContinue && head.version == .http11 {
                    replies.append([Self.continueBytes])
                    guard await flush(&replies, on: connection) else { return nil }
                }
                Self.note(.headParsed, on: &lifecycle)
                continue
            case nil:
                break
            }
            guard await flush(&replies, on: connection) else { return nil }
            guard let deadline = lifecycle.readDeadline else {
                preconditionFailure("reading a request in \(lifecycle.state)")
            }
            let bytes: [UInt8]
            do {
                bytes = drained
                    ? try await connection.readAfterDrain(maxBytes: Self.readBytes, until: deadline)
                    : try await connection.read(maxBytes: Self.readBytes, until: deadline)
            } catch IOWaitError.timedOut {
                if parser.isMidRequest {
                    Self.note(.refused, on: &lifecycle)
                    await answerAndClose(.requestTimeout, "request not received in time", on: connection,
                                         after: &replies)
                }
                return nil
            } catch {
                return nil
            }
            if bytes.isEmpty { return nil }
            drained = bytes.count < Self.readBytes
            if listedIdle {
                leaveIdle(connection)
                listedIdle = false
            }
            Self.note(.bytesArrived, on: &lifecycle)
            switch preface.check(bytes) {
            case .http2: return nil
            case .undecided: continue
            case .http1(let bytes): parser.append(bytes)
            }
        }
    }

    /// `lifecycle.handle(event, now: LoopClock().now)`, in a synchronous frame of its
    /// own. Why: reading the clock makes a `ContinuousClock.Instant`, which is resilient
    /// (not frozen), so inlined into the async request loop it was a task-allocator
    /// allocation; here it is on the thread's stack (issue 27, bench/request-path.md).
    /// The lifecycle itself runs on `LoopClock`, whose instants have a fixed layout, and
    /// reads the clock only for a transition that sets a deadline.
    @inline(never)
    private static func note(_ event: ConnectionLifecycle<LoopClock>.Event,
                             on lifecycle: inout ConnectionLifecycle<LoopClock>) {
        lifecycle.handle(event, now: LoopClock().now)
    }

    /// What one read of a request asks for.
    private static let readBytes = 4096

    /// Answers a refused request after the replies waiting and lets the caller close.
    private nonisolated(nonsending) func answerAndClose(_ status: HTTPStatus, _ reason: String, on connection: Connection,
                                                        after replies: inout ReplyBatch) async {
        replies.append(refusal(status, reason))
        do {
            try await replies.flush(on: connection, deadline: .after(.seconds(2)))
        } catch {
            return
        }
        // Lingering close: a client may still be sending the body we refused.
        // Closing with its bytes unread would reset the connection and could
        // destroy the answer before the client reads it. So the answer's end is
        // sent at once (close_notify, FIN: the client sees it whole without
        // waiting), and what still arrives is discarded for a moment (at most 1 s
        // and 1 MiB) or until the client closes.
        await connection.finishAndDiscard(limit: 1 << 20, until: .after(.seconds(1)))
    }
}
