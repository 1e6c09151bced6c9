/// The per-connection loop: read a request, answer it, repeat while the
/// connection may stay open. Short on purpose: the parser, the handler and
/// `ConnectionLifecycle` (the connection's states and deadlines) do the work.
extension HTTPServer {
    private static let continueBytes = Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)

    /// What a response left the connection to do next.
    private enum AfterResponse {
        case keepAlive
        case close
        /// The head of a streaming response went out; its body runs next.
        case stream(StreamingBody)
    }

    /// One word or two in the connection's frames for the stream's whole life.
    private enum StreamingBody: Sendable {
        /// The head is not written yet: the pump writes it with the first batch.
        case pump(StreamPump)
        /// The connection speaks HTTP/2 (ALPN `h2`, or these first bytes began the preface).
        case http2([UInt8])
    }

    @inline(never)  // its own small frame, not merged into the connection's closure
    func serve(_ connection: Connection) async {
        defer {
            leaveIdle(connection)
            connection.close()
        }
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
        var lifecycle = ConnectionLifecycle<ContinuousClock>(timeouts: .init(configuration), tls: connection.isTLS,
                                                             now: .now)
        if case .handshaking(let deadline) = lifecycle.state {
            guard await establishTLS(on: connection, deadline: deadline) else { return nil }
            lifecycle.handle(.handshakeCompleted, now: .now)
            if configuration.http2.enabled && connection.tlsALPNProtocol == "h2" { return .http2([]) }
        }
        return await serveRequests(on: connection, lifecycle: &lifecycle)
    }

    /// Serves requests until the connection closes (nil) or a streaming
    /// response takes it over.
    private func serveRequests(on connection: Connection,
                               lifecycle: inout ConnectionLifecycle<ContinuousClock>) async -> StreamingBody? {
        var parser = HTTPRequestParser(limits: configuration.limits)
        var drained = false
        var preface: HTTP2PrefaceCheck = configuration.http2.enabled && !connection.isTLS ? .pending : .http1
        while !Task.isCancelled {
            guard let request = await nextRequest(on: connection, parser: &parser, drained: &drained,
                                                  lifecycle: &lifecycle, preface: &preface) else {
                if case .http2(let initial) = preface { return .http2(initial) }
                return nil
            }
            let response = await handler(request)
            switch await respond(to: request, with: response, on: connection) {
            case .keepAlive:
                lifecycle.handle(.responded(keepAlive: true), now: .now)
            case .close:
                lifecycle.handle(.responded(keepAlive: false), now: .now)
                return nil
            case .stream(let body):
                lifecycle.handle(.streamStarted, now: .now)
                return body
            }
        }
        return nil
    }

    /// Reads until the parser has a whole request, within the deadlines
    /// `lifecycle` sets. Nil when the connection should close (EOF, timeout,
    /// refusal already answered, shutdown). `drained` says whether the last read
    /// left the socket empty (it returned less than it asked for): the next read
    /// then waits for readability first, instead of a read that says `EAGAIN`.
    private func nextRequest(on connection: Connection, parser: inout HTTPRequestParser, drained: inout Bool,
                             lifecycle: inout ConnectionLifecycle<ContinuousClock>,
                             preface: inout HTTP2PrefaceCheck) async -> HTTPRequest? {
        lifecycle.handle(.awaitingRequest(midRequest: parser.isMidRequest), now: .now)
        // Idle connections are listed, so that shutdown can close them at once.
        var listedIdle = lifecycle.isIdle
        if listedIdle && !enterIdle(connection) { return nil }
        defer { if listedIdle { leaveIdle(connection) } }
        while true {
            let event: HTTPParserEvent?
            do {
                event = try parser.next()
            } catch {
                lifecycle.handle(.refused, now: .now)
                await answerAndClose(error.status, error.reason, on: connection)
                return nil
            }
            switch event {
            case .request(let request):
                lifecycle.handle(.requestParsed, now: .now)
                return request
            case .head(let head):
                if head.expectsContinue && head.version == .http11 {
                    do {
                        try await connection.write(Self.continueBytes, deadline: .now + configuration.writeTimeout)
                    } catch {
                        return nil
                    }
                }
                lifecycle.handle(.headParsed, now: .now)
                continue
            case nil:
                break
            }
            guard let deadline = lifecycle.readDeadline else {
                preconditionFailure("reading a request in \(lifecycle.state)")
            }
            let bytes: [UInt8]
            do {
                bytes = drained
                    ? try await connection.readAfterDrain(maxBytes: Self.readBytes, deadline: deadline)
                    : try await connection.read(maxBytes: Self.readBytes, deadline: deadline)
            } catch IOWaitError.timedOut {
                if parser.isMidRequest {
                    lifecycle.handle(.refused, now: .now)
                    await answerAndClose(.requestTimeout, "request not received in time", on: connection)
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
            lifecycle.handle(.bytesArrived, now: .now)
            if preface.check(bytes) { return nil }
            parser.append(bytes)
        }
    }

    /// Writes the response (for a stream, its head only).
    private func respond(to request: HTTPRequest, with response: HTTPResponse,
                         on connection: Connection) async -> AfterResponse {
        if case .bytes(let body) = response.body {
            return await respondComplete(to: request, head: response.head, body: body, on: connection)
        }
        var head = response.head
        head.headers.replaceOrAdd(name: "Date", value: HTTPDate.now())
        let isHEAD = request.head.method == "HEAD"
        switch response.body {
        case .bytes:
            preconditionFailure("a complete body is answered by respondComplete")
        case .source(let sourced) where isHEAD:
            // The head a GET would get, framing included (a stream has no length
            // to announce); the source is not read.
            sourced.source.cancel()
            if request.head.version == .http11 { head.headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked") }
            return await writeComplete(head, body: [], for: request, on: connection) ? .keepAlive : .close
        case .source(let sourced):
            let chunked = request.head.version == .http11
            if chunked { head.headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked") }
            head.headers.replaceOrAdd(name: "Connection", value: "close")
            return .stream(.pump(StreamPump(stream: ResponseStream(connection: connection, chunked: chunked),
                                            head: head.bytes(version: .http11), body: sourced)))
        }
    }

    /// Writes a response with a complete body: the server's `Date` and (unless the status
    /// has no body, or a `HEAD` answer already names the GET body's length)
    /// `Content-Length` replace any the handler set.
    private func respondComplete(to request: HTTPRequest, head: HTTPResponseHead, body: [UInt8],
                                 on connection: Connection) async -> AfterResponse {
        let isHEAD = request.head.method == "HEAD"
        let mayHaveBody = Self.mayHaveBody(head.status)
        // A HEAD answer may already carry the length the GET body would have.
        let keepsLength = isHEAD && head.headers.contains("Content-Length")
        let length = mayHaveBody && !keepsLength ? body.count : nil
        let sendBody = !isHEAD && mayHaveBody
        let keepAlive = await writeComplete(head, date: true, contentLength: length, body: sendBody ? body : [],
                                            for: request, on: connection)
        return keepAlive ? .keepAlive : .close
    }

    /// Writes a response that ends with `body`; true when the connection may carry another
    /// request. The head is encoded straight to bytes: the handler's fields, minus those
    /// the server sets, then `Date` (when `date`), `Content-Length` (when `contentLength`)
    /// and `Connection` (when the connection closes, or stays open for HTTP/1.0), in that
    /// order. A small body goes out in the head's buffer, one write.
    private func writeComplete(_ head: HTTPResponseHead, date: Bool = false, contentLength: Int? = nil,
                               body: [UInt8], for request: HTTPRequest, on connection: Connection) async -> Bool {
        let wantsClose = head.headers.firstValue(of: "Connection", equalsIgnoringCase: "close")
        let keepAlive = request.head.keepAlive && !wantsClose && !isShuttingDown
        let connectionLine: [UInt8]? = !keepAlive ? HTTPServerFields.closeLine
            : request.head.version == .http10 ? HTTPServerFields.keepAliveLine : nil
        var replaced: HTTPServerFields = []
        if date { replaced.insert(.date) }
        if contentLength != nil { replaced.insert(.contentLength) }
        if connectionLine != nil { replaced.insert(.connection) }
        let inline = body.count <= Self.inlineBodyLimit
        var encoder = HTTPResponseHeadEncoder(status: head.status, capacity: 256 + (inline ? body.count : 0))
        encoder.appendFields(of: head.headers, skipping: replaced)
        if date { encoder.appendFieldLine(HTTPDateCache.shared.fieldLine) }
        if let contentLength { encoder.appendContentLength(contentLength) }
        if let connectionLine { encoder.appendFieldLine(connectionLine) }
        encoder.endHead()
        do {
            if inline {
                encoder.appendBody(body)
                try await connection.write(encoder.bytes, deadline: .now + configuration.writeTimeout)
            } else {
                try await connection.write([encoder.bytes, body], deadline: .now + configuration.writeTimeout)
            }
        } catch {
            return false
        }
        return keepAlive
    }

    /// What one read of a request asks for.
    private static let readBytes = 4096

    /// Bodies up to this size are copied behind the head and sent in one buffer; larger
    /// ones go as a second buffer of the same `writev`.
    private static let inlineBodyLimit = 4096

    /// Answers a refused request and lets the caller close.
    private func answerAndClose(_ status: HTTPStatus, _ reason: String, on connection: Connection) async {
        do {
            try await connection.write(refusal(status, reason), deadline: .now + .seconds(2))
        } catch {
            return
        }
        // Lingering close: a client may still be sending the body we refused.
        // Closing with its bytes unread would reset the connection and could
        // destroy the answer before the client reads it, so discard what still
        // arrives for a moment (at most 1 s and 1 MiB) or until it closes.
        let deadline = ContinuousClock.now + .seconds(1)
        var discarded = 0
        while discarded < 1 << 20,
              let bytes = try? await connection.read(maxBytes: 16 * 1024, deadline: deadline), !bytes.isEmpty {
            discarded += bytes.count
        }
    }

    /// A refusal on the wire: what the configured `refusal` builds for the status
    /// and reason, with `extra` fields, `Connection: close`, `Date` and its length.
    func refusal(_ status: HTTPStatus, _ reason: String, extra: HTTPHeaders = HTTPHeaders()) -> [[UInt8]] {
        var response = configuration.refusal(status, reason)
        guard case .bytes(let body) = response.body else { return [] }
        for field in extra { response.head.headers.replaceOrAdd(name: field.name, value: field.value) }
        response.head.headers.replaceOrAdd(name: "Connection", value: "close")
        response.head.headers.replaceOrAdd(name: "Date", value: HTTPDate.now())
        response.head.headers.replaceOrAdd(name: "Content-Length", value: "\(body.count)")
        return [response.head.bytes(version: .http11), body]
    }

    private static func mayHaveBody(_ status: HTTPStatus) -> Bool {
        !(100..<200).contains(status.code) && status.code != 204 && status.code != 304
    }
}
