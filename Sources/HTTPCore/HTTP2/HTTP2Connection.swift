import Locking

/// One HTTP/2 connection, in its connection's task: a reader that feeds nghttp2
/// what arrives and starts each request's handler as a child task, and a writer
/// (a child too) that asks the streams' sources for frames and writes what nghttp2
/// serializes. The connection's end (EOF, error, GOAWAY done, cancellation)
/// ends every stream: handlers are cancelled, sources cancelled, the session freed.
///
/// A stream's flow-control window closed only stops nghttp2 from taking that
/// stream's bytes: its source is not asked again until they went out, so its
/// subscriber's queue fills and the channel's slow-subscriber policy applies; the
/// other streams and connections go on. A socket that takes nothing stops the
/// writer of this connection only.
final class HTTP2Connection: Sendable {
    let connection: Connection
    private let core: Locked<HTTP2SessionCore>
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation
    private let handler: HTTPHandler
    private let configuration: HTTPServerConfiguration
    private let counters: HTTP2Counters

    init(connection: Connection, configuration: HTTPServerConfiguration, counters: HTTP2Counters,
         handler: @escaping HTTPHandler) {
        self.connection = connection
        self.configuration = configuration
        self.counters = counters
        self.handler = handler
        core = Locked(HTTP2SessionCore(limits: configuration.limits, settings: configuration.http2, counters: counters))
        (wakes, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Serves the connection until it ends; `initial` are bytes already read (the preface).
    func run(initial: [UInt8]) async {
        guard core.withLock({ $0.start() }) else { return }
        counters.connections.add(1, ordering: .relaxed)
        defer { counters.connections.subtract(1, ordering: .relaxed) }
        wake.yield()  // the server's SETTINGS go out at once
        async let written: Void = writeLoop()
        await withDiscardingTaskGroup { group in
            await readLoop(initial, group: &group)
            core.withLock { core in
                core.finishing = true
                core.readerEnded = true
            }
            wake.yield()
            group.cancelAll()
        }
        await written
        for work in core.withLock({ $0.end() }) { work() }
    }

    /// A graceful GOAWAY (shutdown): open streams run to their end, then the connection closes.
    func goAway() {
        core.withLock { $0.goAway(.shutdown) }
        wake.yield()
    }

    /// Reads and feeds nghttp2 until the client or the session ends. After the session
    /// broke (abuse: its GOAWAY is on its way) it goes on reading and discarding for a
    /// while (at most 1 MiB, until the writer's linger ends): closing with unread bytes
    /// would reset the connection and could destroy the GOAWAY before the client reads it.
    private func readLoop(_ initial: [UInt8], group: inout DiscardingTaskGroup) async {
        var bytes = initial
        var discarded: Int?
        var lastReceived = ContinuousClock.now
        while !Task.isCancelled {
            if let count = discarded {
                discarded = count + bytes.count
                if count + bytes.count > 1 << 20 { return }
            } else if !bytes.isEmpty {
                let (events, work, broken) = core.withLock { core in
                    core.receive(bytes)
                    if core.broken { core.finishing = true }
                    defer { core.events.removeAll() }
                    return (core.events, core.takeClosedWork(), core.broken)
                }
                for item in work { item() }
                for event in events { start(event, in: &group) }
                wake.yield()
                if broken { discarded = 0 }
            }
            // While discarding, no deadline: the writer's linger ends the connection. Else the
            // idle deadline when no stream is open, or a stalled request's; and while streams
            // are open, a look again at least every idle timeout: the last stream closes in
            // the writer (its response sent), which does not end this wait, and a client that
            // sends nothing more would otherwise keep an idle connection forever.
            let idleTimeout = configuration.idleTimeout
            let deadline: ContinuousClock.Instant? = discarded != nil ? nil : core.withLock { core in
                if let idleEnd = core.idleEnd(after: lastReceived, timeout: idleTimeout) { return idleEnd }
                return min(core.stalledRequestDeadline(configuration.bodyTimeout) ?? .now + idleTimeout,
                           .now + idleTimeout)
            }
            do {
                bytes = try await connection.read(maxBytes: 16 * 1024, deadline: deadline)
                lastReceived = .now
            } catch IOWaitError.timedOut {
                // Idle for the whole timeout: a GOAWAY. Else a request stopped arriving:
                // refused on its stream; the connection goes on.
                let (events, broken) = core.withLock { core in
                    if let idleEnd = core.idleEnd(after: lastReceived, timeout: idleTimeout), idleEnd <= .now {
                        core.goAway(.idleTimeout)
                    } else {
                        core.refuseStalledRequests(configuration.bodyTimeout, now: .now)
                    }
                    if core.broken { core.finishing = true }
                    defer { core.events.removeAll() }
                    return (core.events, core.broken)
                }
                for event in events { start(event, in: &group) }
                wake.yield()
                bytes = []
                if broken { discarded = 0 }
                continue
            } catch {
                return
            }
            if bytes.isEmpty { return }
        }
    }

    private func start(_ event: HTTP2SessionCore.Event, in group: inout DiscardingTaskGroup) {
        switch event {
        case .request(let id, let request):
            group.addTask { await self.answer(request, on: id) }
        case .refuse(let id, let status, let reason):
            submit(configuration.refusal(status, reason), to: id, isHEAD: false)
        }
    }

    /// The handler's answer to one stream's request; a stream whose body ends by
    /// itself (a token's expiry) is ended here when that time comes, unless the stream
    /// closed first (then this task ends at once: a reset stream keeps no task).
    private func answer(_ request: HTTPRequest, on id: Int32) async {
        let response = await handler(request)
        guard let endsAt = submit(response, to: id, isHEAD: request.head.method == "HEAD") else { return }
        let (closed, signal) = AsyncStream.makeStream(of: Void.self)
        onClose(id) { signal.finish() }
        let expired = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                try? await Task.sleep(until: endsAt, clock: .continuous)
                return !Task.isCancelled
            }
            group.addTask {
                for await _ in closed {}
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        guard expired else { return }
        core.withLock { $0.endBody(id) }?.cancel()
        wake.yield()
    }

    /// Submits a response; for a pumped body that ends by itself, when.
    @discardableResult
    private func submit(_ response: HTTPResponse, to id: Int32, isHEAD: Bool) -> ContinuousClock.Instant? {
        let (status, fields, body) = HTTP2ResponseHead.make(response, isHEAD: isHEAD)
        if case .source(let sourced) = response.body, isHEAD { sourced.source.cancel() }
        let submitted = core.withLock { $0.respond(id, status: status, fields: fields, body: body) }
        wake.yield()
        guard case .source(let sourced) = response.body, !isHEAD else { return nil }
        guard submitted else {
            sourced.source.cancel()
            return nil
        }
        sourced.started?(ResponseStream(connection: connection, chunked: false,
                                        http2: HTTP2StreamControl(connection: self, id: id)))
        return sourced.endsAt
    }

    /// Writes until the session is done or the connection ends, then aborts the
    /// socket (the reader wakes and ends).
    private func writeLoop() async {
        defer { connection.abort() }
        for await _ in wakes {
            guard await flush() else { return }
            if core.withLock({ $0.isDone || $0.finishing }) { break }
        }
        // A FIN after the last frames (a GOAWAY), then a moment for the client to read
        // them and close before the socket is cut: until the reader ends, or 1 s.
        connection.finishWriting()
        guard !core.withLock({ $0.readerEnded }) else { return }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { try? await Task.sleep(for: .seconds(1)) }
            group.addTask {
                for await _ in self.wakes where self.core.withLock({ $0.readerEnded }) { return }
            }
            await group.next()
            group.cancelAll()
        }
    }

    /// Asks the sources that have room, lets nghttp2 frame what it may, writes it;
    /// until nothing is left to send. False when the socket failed.
    private func flush() async -> Bool {
        while true {
            let asks = core.withLock { $0.takeNeedsTake() }
            var takes: [(Int32, StreamTake)] = []
            for (id, source) in asks { takes.append((id, source.take(orNotify: { self.sourceReady(id) }))) }
            let (chunks, framed, work, more) = core.withLock { core in
                for (id, take) in takes { core.deliver(take, to: id) }
                let chunks = core.produce()
                defer { core.framed.removeAll() }
                return (chunks, core.framed, core.takeClosedWork(), !core.needsTake.isEmpty)
            }
            for item in work { item() }
            if chunks.isEmpty {
                if more { continue }
                return true
            }
            do {
                try await connection.write(chunks, deadline: .now + configuration.writeTimeout)
            } catch {
                return false
            }
            let now = ContinuousClock.now
            for (source, batch) in framed { source.written(batch, at: now) }
        }
    }

    private func sourceReady(_ id: Int32) {
        core.withLock { $0.sourceReady(id) }
        wake.yield()
    }

    // For `HTTP2StreamControl`.
    func reset(_ id: Int32) {
        core.withLock { $0.reset(id, code: 0x8) }  // CANCEL
        wake.yield()
    }

    func onClose(_ id: Int32, _ handler: @escaping @Sendable () -> Void) {
        if !core.withLock({ $0.onClose(id, handler) }) { handler() }
    }
}

/// A streaming response's handle on its HTTP/2 stream (`ResponseStream` over HTTP/2):
/// aborting resets the stream only; the peer closing is the stream closing.
final class HTTP2StreamControl: Sendable {
    let connection: HTTP2Connection
    let id: Int32

    init(connection: HTTP2Connection, id: Int32) {
        self.connection = connection
        self.id = id
    }

    func abort() { connection.reset(id) }
    func onPeerClosed(_ handler: @escaping @Sendable () -> Void) { connection.onClose(id, handler) }
}
