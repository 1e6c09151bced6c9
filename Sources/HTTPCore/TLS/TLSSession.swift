import CStreamsSSL
import Glibc
import Locking

/// What one non-blocking TLS call did: finished with a value, or needs the
/// socket to become readable or writable before it is retried.
enum TLSStep<Value> {
    case done(Value)
    case wants(Interest)
}

/// The TLS state of one connection: an OpenSSL `SSL` reading and writing the
/// connection's socket directly (a socket BIO on its descriptor; the
/// `Connection` owns the descriptor and closes it after `close()` here).
///
/// Ownership: this object owns the `SSL` and frees it exactly once, in
/// `close()` (or `deinit`); every later call throws `IOWaitError.closed`.
///
/// Locking: an `SSL` must not be used by two threads at once, and a
/// connection may have a reading and a writing task at the same time. Every
/// call on the `SSL` therefore runs under `state`'s lock. The calls never
/// block (the socket is non-blocking), so the lock is held for one call,
/// never across an `await`; waiting for readiness happens in `Connection`
/// after the lock is released. OpenSSL's error queue is per thread: it is
/// cleared before each call and read right after it, inside the same lock
/// section, so no other call's errors can mix in.
final class TLSSession: Sendable {
    private struct State {
        /// Owned; nil once freed.
        var ssl: OpaquePointer?
        /// The handshake completed (only then is a close_notify sent).
        var established = false
        /// A fatal error happened: OpenSSL forbids `SSL_shutdown` afterwards.
        var failed = false
    }

    private enum Call: String {
        case handshake = "SSL_do_handshake"
        case read = "SSL_read"
        case write = "SSL_write"
    }

    private let state: Locked<State>

    /// A server session (`context` is a server context) or a client one that
    /// sends `serverName` as SNI and verifies the certificate against it.
    /// - Throws: `TLSError.context` when OpenSSL cannot allocate the session.
    init(context: TLSContext, fd: Int32, serverName: String?, offersHTTP2: Bool = false) throws(TLSError) {
        OpenSSLErrors.clear()
        guard let ssl = SSL_new(context.pointer) else { throw .context(reason: OpenSSLErrors.drain()) }
        guard SSL_set_fd(ssl, fd) == 1 else {
            SSL_free(ssl)
            throw .context(reason: OpenSSLErrors.drain())
        }
        if context.isServer {
            SSL_set_accept_state(ssl)
        } else {
            SSL_set_connect_state(ssl)
            if offersHTTP2 {
                let protocols: [UInt8] = [2] + Array("h2".utf8) + [8] + Array("http/1.1".utf8)
                _ = SSL_set_alpn_protos(ssl, protocols, UInt32(protocols.count))
            } else {
                _ = cstreams_SSL_offer_alpn_http11(ssl)
            }
            if let serverName {
                if SocketAddress(numericHost: serverName, port: 0) != nil {
                    // An IP literal: checked against the certificate's IP
                    // addresses, and never sent as SNI (RFC 6066 forbids it).
                    _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
                } else {
                    _ = cstreams_SSL_set_tlsext_host_name(ssl, serverName)
                    _ = SSL_set1_host(ssl, serverName)
                }
            }
        }
        state = Locked(State(ssl: ssl))
    }

    deinit {
        close()
    }

    /// One step of the handshake; `.done` once it is complete.
    /// - Throws: `TLSError.plainHTTPRequest`, `TLSError.handshake`, `SystemError`.
    func handshake() throws -> (step: TLSStep<Void>, written: Int) {
        let (step, written) = try perform(.handshake) { SSL_do_handshake($0) }
        switch step {
        case .done: return (.done(()), written)
        case .wants(let interest): return (.wants(interest), written)
        }
    }

    /// Decrypts up to `buffer.count` bytes; `.done(0)` is the end of the
    /// stream (close_notify, or the peer closed the socket).
    func read(into buffer: UnsafeMutableRawBufferPointer) throws -> (step: TLSStep<Int>, written: Int) {
        try perform(.read) { SSL_read($0, buffer.baseAddress, Int32(clamping: buffer.count)) }
    }

    /// Encrypts and sends some of `bytes` (at least one byte when `.done`).
    /// After `.wants`, retry with the same bytes (they may move in memory).
    func write(_ bytes: UnsafeRawBufferPointer) throws -> (step: TLSStep<Int>, written: Int) {
        try perform(.write) { SSL_write($0, bytes.baseAddress, Int32(clamping: bytes.count)) }
    }

    /// Sends a close_notify if the socket takes it at once (never waits for
    /// the peer's), then frees the `SSL`. Later calls do nothing.
    func close() {
        state.withLock { state in
            guard let ssl = state.ssl else { return }
            if state.established && !state.failed {
                OpenSSLErrors.clear()
                _ = SSL_shutdown(ssl)
                OpenSSLErrors.clear()
            }
            SSL_free(ssl)
            state.ssl = nil
        }
    }

    /// The certificate the peer presented, if any.
    var peerCertificate: TLSCertificateInfo? {
        state.withLock { state in
            guard let ssl = state.ssl, let certificate = SSL_get1_peer_certificate(ssl) else { return nil }
            defer { X509_free(certificate) }
            return TLSCertificateInfo(certificate)
        }
    }

    /// Whether the peer's close_notify has arrived (a clean end of its stream).
    var receivedCloseNotify: Bool {
        state.withLock { state in
            guard let ssl = state.ssl else { return false }
            return SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN != 0
        }
    }

    /// The negotiated protocol version, e.g. `TLSv1.3`.
    var protocolVersion: String? {
        state.withLock { state in
            guard let ssl = state.ssl, state.established, let name = SSL_get_version(ssl) else { return nil }
            return String(cString: name)
        }
    }

    /// The protocol chosen by ALPN, e.g. `http/1.1`; nil when none was.
    var alpnProtocol: String? {
        state.withLock { state in
            guard let ssl = state.ssl else { return nil }
            var data: UnsafePointer<UInt8>?
            var length: UInt32 = 0
            SSL_get0_alpn_selected(ssl, &data, &length)
            guard let data, length > 0 else { return nil }
            return String(decoding: UnsafeBufferPointer(start: data, count: Int(length)), as: UTF8.self)
        }
    }

    /// Runs one SSL call under the lock and classifies its result. Also
    /// returns how many bytes it wrote to the socket (records, alerts,
    /// handshake messages), for the connection's byte counter.
    private func perform(_ call: Call, _ body: (OpaquePointer) -> Int32) throws -> (step: TLSStep<Int>, written: Int) {
        try state.withLock { state throws -> (step: TLSStep<Int>, written: Int) in
            guard let ssl = state.ssl else { throw IOWaitError.closed }
            OpenSSLErrors.clear()
            let socket = SSL_get_wbio(ssl)
            let before = BIO_number_written(socket)
            Glibc.errno = 0
            let result = body(ssl)
            let callErrno = Glibc.errno
            let written = Int(truncatingIfNeeded: BIO_number_written(socket) &- before)
            if result > 0 {
                if call == .handshake { state.established = true }
                return (.done(Int(result)), written)
            }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ:
                return (.wants(.read), written)
            case SSL_ERROR_WANT_WRITE:
                return (.wants(.write), written)
            case SSL_ERROR_ZERO_RETURN where call == .read:
                return (.done(0), written)  // the peer's close_notify
            case SSL_ERROR_SYSCALL:
                state.failed = true
                let reasons = OpenSSLErrors.drain(fallback: "")
                if callErrno != 0 { throw SystemError(call: call.rawValue, errno: callErrno) }
                if call == .read { return (.done(0), written) }  // EOF without close_notify
                throw failure(call, reasons.isEmpty ? "the peer closed the connection" : reasons, ssl)
            default:
                state.failed = true
                if let (library, reason) = OpenSSLErrors.peekReason(), library == ERR_LIB_SSL {
                    if reason == SSL_R_HTTP_REQUEST || reason == SSL_R_HTTPS_PROXY_REQUEST {
                        OpenSSLErrors.clear()
                        throw TLSError.plainHTTPRequest
                    }
                    if reason == SSL_R_UNEXPECTED_EOF_WHILE_READING && call == .read {
                        OpenSSLErrors.clear()
                        return (.done(0), written)  // EOF without close_notify: HTTP framing catches truncation
                    }
                }
                throw failure(call, OpenSSLErrors.drain(fallback: "the peer closed the connection"), ssl)
            }
        }
    }

    private func failure(_ call: Call, _ reason: String, _ ssl: OpaquePointer) -> TLSError {
        guard call == .handshake else { return .protocolFailure(reason: reason) }
        let verification = SSL_get_verify_result(ssl)
        if verification != X509_V_OK, let text = X509_verify_cert_error_string(verification) {
            return .handshake(reason: "\(reason) (\(String(cString: text)))")
        }
        return .handshake(reason: reason)
    }
}
