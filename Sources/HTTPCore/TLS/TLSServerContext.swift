import Locking

/// A server's TLS identity: the certificate chain and key files, and the
/// context last built from them.
///
/// `reload()` builds a fresh context from the same paths and swaps it in
/// under a lock, so every connection accepted afterwards uses the new
/// certificate while open connections keep the one they started with (their
/// SSL holds a reference to its context). A reload that fails changes nothing.
public final class TLSServerContext: Sendable {
    public let certificateChainFile: String
    public let privateKeyFile: String
    /// Whether ALPN offers `h2` before `http/1.1`.
    public let http2: Bool
    private let current: Locked<TLSContext>

    /// Loads the files now; see `TLSContext.server` for what may fail.
    public init(certificateChainFile: String, privateKeyFile: String, http2: Bool = true) throws(TLSError) {
        self.certificateChainFile = certificateChainFile
        self.privateKeyFile = privateKeyFile
        self.http2 = http2
        current = Locked(try TLSContext.server(certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile,
                                                 http2: http2))
    }

    /// The context new connections use.
    public var context: TLSContext {
        current.withLock { $0 }
    }

    /// Loads the files again and, if that works, makes the result current.
    /// - Returns: the new context (its `certificate` says what is served now).
    /// - Throws: `TLSError`; the previous context then stays current.
    @discardableResult
    public func reload() throws(TLSError) -> TLSContext {
        // Built outside the lock: file reads and key checks take milliseconds,
        // and accepting must not wait for them.
        let fresh = try TLSContext.server(certificateChainFile: certificateChainFile, privateKeyFile: privateKeyFile,
                                                 http2: http2)
        current.withLock { $0 = fresh }
        return fresh
    }
}
