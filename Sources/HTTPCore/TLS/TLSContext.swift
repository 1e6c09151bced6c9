import CStreamsSSL
import Glibc

/// One OpenSSL `SSL_CTX`: the settings and (for a server) the certificate
/// every connection made from it shares.
///
/// Both kinds use TLS 1.2 as the minimum, OpenSSL's default cipher suites,
/// no compression, no renegotiation, and the modes the non-blocking
/// transport relies on: partial writes, a write buffer that may move between
/// retries, and buffers released while a connection is idle (an idle TLS
/// stream then costs a few KB, not OpenSSL's 34 KB of read and write buffers).
/// A server context also answers ALPN with `http/1.1` and resumes sessions
/// (session cache and tickets on).
public final class TLSContext: @unchecked Sendable {
    // Why `@unchecked Sendable` is safe: `pointer` is an SSL_CTX that `init`
    // configures completely and nothing changes afterwards. OpenSSL lets an
    // unchanging SSL_CTX be shared by threads: `SSL_new`, its reference count
    // and its session cache take OpenSSL's own locks. It is freed in `deinit`,
    // when no Swift reference remains; each SSL made from it holds its own
    // reference, so open connections outlive a replaced context safely.
    let pointer: OpaquePointer
    let isServer: Bool
    /// A server's own certificate (the first of its chain); nil for a client.
    public let certificate: TLSCertificateInfo?

    private init(pointer: OpaquePointer, isServer: Bool, certificate: TLSCertificateInfo?) {
        self.pointer = pointer
        self.isServer = isServer
        self.certificate = certificate
    }

    deinit {
        SSL_CTX_free(pointer)
    }

    /// A server context from a PEM certificate chain (the server's certificate
    /// first, then intermediates) and its PEM private key (unencrypted).
    /// - Throws: `TLSError` naming the file at fault: missing, unreadable, not
    ///   PEM, encrypted, or a key that does not belong to the certificate.
    /// With `http2`, ALPN chooses `h2` when the client offers it (else `http/1.1`).
    public static func server(certificateChainFile: String, privateKeyFile: String,
                              http2: Bool = false) throws(TLSError) -> TLSContext {
        try checkReadable(certificateChainFile)
        try checkReadable(privateKeyFile)
        let ctx = try makeContext(server: true)
        do throws(TLSError) {
            if http2 { cstreams_SSL_CTX_select_alpn_h2(ctx) } else { cstreams_SSL_CTX_select_alpn_http11(ctx) }
            _ = cstreams_SSL_CTX_set_session_cache_mode(ctx, Int(SSL_SESS_CACHE_SERVER))
            let sessionContext = Array("sse-gateway".utf8)
            _ = SSL_CTX_set_session_id_context(ctx, sessionContext, UInt32(sessionContext.count))
            cstreams_SSL_CTX_refuse_passphrases(ctx)
            guard SSL_CTX_use_certificate_chain_file(ctx, certificateChainFile) == 1,
                  let leaf = SSL_CTX_get0_certificate(ctx) else {
                throw .invalidCertificate(path: certificateChainFile, reason: OpenSSLErrors.drain())
            }
            guard let key = cstreams_read_private_key(privateKeyFile) else {
                throw .invalidPrivateKey(path: privateKeyFile, reason: OpenSSLErrors.drain(fallback: "no key found"))
            }
            defer { EVP_PKEY_free(key) }
            guard X509_check_private_key(leaf, key) == 1 else {
                OpenSSLErrors.clear()
                throw .keyDoesNotMatchCertificate(certificatePath: certificateChainFile, keyPath: privateKeyFile)
            }
            guard SSL_CTX_use_PrivateKey(ctx, key) == 1 else {
                throw .invalidPrivateKey(path: privateKeyFile, reason: OpenSSLErrors.drain())
            }
            return TLSContext(pointer: ctx, isServer: true, certificate: TLSCertificateInfo(leaf))
        } catch {
            SSL_CTX_free(ctx)
            throw error
        }
    }

    /// A client context (tests, the load tool) that trusts the PEM CA
    /// certificates of `trustedCAFile` (the system's store when nil) and,
    /// with `verifyPeer`, refuses servers whose chain does not verify.
    public static func client(trustedCAFile: String?, verifyPeer: Bool = true) throws(TLSError) -> TLSContext {
        if let trustedCAFile { try checkReadable(trustedCAFile) }
        let ctx = try makeContext(server: false)
        let loaded = trustedCAFile.map { SSL_CTX_load_verify_locations(ctx, $0, nil) }
            ?? SSL_CTX_set_default_verify_paths(ctx)
        guard loaded == 1 else {
            let reason = OpenSSLErrors.drain()
            SSL_CTX_free(ctx)
            throw .invalidCertificate(path: trustedCAFile ?? "the system's CA store", reason: reason)
        }
        SSL_CTX_set_verify(ctx, verifyPeer ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nil)
        return TLSContext(pointer: ctx, isServer: false, certificate: nil)
    }

    /// A context with the settings both sides share.
    private static func makeContext(server: Bool) throws(TLSError) -> OpaquePointer {
        OpenSSLErrors.clear()
        guard let ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method()) else {
            throw .context(reason: OpenSSLErrors.drain())
        }
        let mode = SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS
        _ = cstreams_SSL_CTX_set_mode(ctx, Int(mode))
        _ = SSL_CTX_set_options(ctx, cstreams_SSL_OP_NO_COMPRESSION | cstreams_SSL_OP_NO_RENEGOTIATION)
        guard cstreams_SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) == 1 else {
            let reason = OpenSSLErrors.drain()
            SSL_CTX_free(ctx)
            throw .context(reason: reason)
        }
        return ctx
    }

    /// Fails with a clear error unless `path` is a regular file this process can open.
    private static func checkReadable(_ path: String) throws(TLSError) {
        let fd: Int32
        do {
            fd = try Syscall.openForReading(path)
        } catch {
            if error.errno == ENOENT { throw .fileNotFound(path: path) }
            throw .fileUnreadable(path: path, reason: String(cString: strerror(error.errno)))
        }
        defer { Syscall.close(fd) }
        let regular: Bool
        do {
            regular = try Syscall.isRegularFile(fd)
        } catch {
            throw .fileUnreadable(path: path, reason: String(cString: strerror(error.errno)))
        }
        if !regular { throw .fileUnreadable(path: path, reason: "not a regular file") }
    }
}

/// What a TLS client connection needs: the context (trusted CAs) and the
/// name it expects the server's certificate to carry (sent as SNI and
/// checked against the certificate's names; nil skips both).
public struct TLSClientContext: Sendable {
    public let context: TLSContext
    public var serverName: String?
    /// Whether ALPN offers `h2` before `http/1.1` (an HTTP/2 client); else `http/1.1` only.
    public var offersHTTP2 = false

    public init(context: TLSContext, serverName: String?) {
        self.context = context
        self.serverName = serverName
    }

    /// A client context trusting `trustedCAFile` that expects `serverName`.
    public init(trustedCAFile: String?, serverName: String? = "localhost", verifyPeer: Bool = true) throws(TLSError) {
        context = try TLSContext.client(trustedCAFile: trustedCAFile, verifyPeer: verifyPeer)
        self.serverName = serverName
    }
}
