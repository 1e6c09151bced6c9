/// TLS on a connection: the same `read`/`write` contract as plain TCP, with
/// OpenSSL's "want read"/"want write" mapped onto the event loop's waits.
///
/// A TLS call may need the opposite readiness of the one its task normally
/// waits for: `SSL_read` may have to send (an alert, a key update) and
/// `SSL_write` may have to receive (handshake messages). The loop keeps a
/// separate waiter and separate unconsumed edges per role, so a reading task
/// waiting for writability and a writing task waiting for readability never
/// take each other's edge; every edge reaches both roles and each retries its
/// call after it. The session's lock makes the two tasks' calls take turns.
extension Connection {
    /// Whether this connection speaks TLS.
    public var isTLS: Bool { tls != nil }

    /// Completes the TLS handshake by `deadline` (nothing to do without TLS).
    /// - Throws: `IOWaitError.timedOut` past `deadline`, `TLSError.handshake`,
    ///   `TLSError.plainHTTPRequest` (a server got plain HTTP), `SystemError`.
    public func handshake(deadline: ContinuousClock.Instant?) async throws {
        guard let tls else { return }
        while true {
            let (step, written) = try tls.handshake()
            count(written)
            switch step {
            case .done: return
            case .wants(let interest):
                try await loop.wait(for: interest, as: .reader, on: registration, deadline: .from(deadline),
                                    cancelledByCaller: waitsCancelledByCaller)
            }
        }
    }

    /// The certificate the peer presented (a client sees the server's).
    public var tlsPeerCertificate: TLSCertificateInfo? { tls?.peerCertificate }

    /// The negotiated TLS version, e.g. `TLSv1.3`; nil without TLS.
    public var tlsProtocolVersion: String? { tls?.protocolVersion }

    /// The protocol agreed by ALPN, e.g. `http/1.1`; nil without TLS or ALPN.
    public var tlsALPNProtocol: String? { tls?.alpnProtocol }

    /// `read` over TLS: plaintext, empty at the end of the stream.
    func read(_ tls: TLSSession, maxBytes: Int, until deadline: LoopDeadline?) async throws -> [UInt8] {
        while true {
            switch try readAvailable(tls, maxBytes: maxBytes) {
            case .done(let bytes): return bytes
            case .wants(let interest):
                try await loop.wait(for: interest, as: .reader, on: registration, deadline: deadline,
                                    cancelledByCaller: waitsCancelledByCaller)
            }
        }
    }

    /// One non-blocking `SSL_read`. Synchronous, so the buffer never lives
    /// across a wait (an idle connection holds none).
    private func readAvailable(_ tls: TLSSession, maxBytes: Int) throws -> TLSStep<[UInt8]> {
        var step = TLSStep<Int>.wants(.read)
        var written = 0
        let bytes = try [UInt8](unsafeUninitializedCapacity: maxBytes) { buffer, initialized in
            (step, written) = try tls.read(into: UnsafeMutableRawBufferPointer(buffer))
            if case .done(let count) = step { initialized = count }
        }
        count(written)
        switch step {
        case .done: return .done(bytes)
        case .wants(let interest): return .wants(interest)
        }
    }

    /// `writeAvailable` over TLS: records of up to 16 KiB until done or OpenSSL
    /// wants readiness; the position then stays where the wanting record starts.
    func writeAvailable(_ tls: TLSSession, _ chunks: [[UInt8]], at position: inout WritePosition) throws -> WriteProgress {
        while !position.isDone {
            let (step, written) = try Self.withNextRecord(of: chunks, at: position) { try tls.write($0) }
            count(written)
            switch step {
            case .done(let plaintext): position.advance(by: plaintext)
            case .wants(let interest): return .blocked(interest)
            }
        }
        return .done
    }

    /// Writes on the socket itself, bypassing TLS: how a server answers a
    /// client that spoke plain HTTP to its TLS port.
    func writeBypassingTLS(_ chunks: [[UInt8]], deadline: ContinuousClock.Instant?) async throws {
        try await socketWrite(chunks, until: .from(deadline))
    }

    /// Ends what this side sends — a TLS close_notify if TLS is up, then a FIN — and
    /// reads and discards, below TLS, until the peer closes, `limit` bytes, or
    /// `deadline`: a lingering close. The peer reads a final answer and sees its end
    /// at once, while what it may still be sending is taken in (closing with unread
    /// input would send a reset, which can destroy the answer before the peer reads
    /// it). Nothing goes through TLS on this connection afterwards; then `close()`.
    func finishAndDiscard(limit: Int, until deadline: LoopDeadline?) async {
        tls?.close()
        finishWriting()
        var total = 0
        while total < limit, let bytes = try? await socketRead(maxBytes: 16 * 1024, until: deadline), !bytes.isEmpty {
            total += bytes.count
        }
    }

    /// Largest plaintext of one TLS record.
    static let recordSize = 16 * 1024

    /// Calls `body` with the next up to 16 KiB of `chunks` from `position`:
    /// in place when the current chunk holds them all, else gathered into one
    /// buffer (one record instead of one per small chunk). The same position
    /// always yields the same bytes, as a TLS write retried after a "want"
    /// requires (their address may change: SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER).
    static func withNextRecord<Result>(of chunks: [[UInt8]], at position: WritePosition,
                                       _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
        let length = min(recordSize, position.remaining)
        let current = chunks[position.index]
        if current.count - position.offset >= length {
            return try current.withUnsafeBytes { raw in
                try body(UnsafeRawBufferPointer(rebasing: raw[position.offset..<position.offset + length]))
            }
        }
        var gathered: [UInt8] = []
        gathered.reserveCapacity(length)
        var index = position.index
        var offset = position.offset
        while gathered.count < length {
            let chunk = chunks[index]
            let take = min(chunk.count - offset, length - gathered.count)
            gathered.append(contentsOf: chunk[offset..<offset + take])
            index += 1
            offset = 0
        }
        return try gathered.withUnsafeBytes(body)
    }

    private func count(_ written: Int) {
        if written > 0 { counters?.bytesWritten.add(UInt64(written), ordering: .relaxed) }
    }
}
