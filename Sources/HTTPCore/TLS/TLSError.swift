/// Why a TLS context could not be built, or a TLS connection failed.
///
/// Setup errors (`fileNotFound` … `context`) name the file at fault, so a
/// server can print them as they are and exit. Connection errors
/// (`handshake`, `plainHTTPRequest`, `protocolFailure`) concern one client and
/// never the others.
public enum TLSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file does not exist.
    case fileNotFound(path: String)
    /// The file exists but cannot be read (permissions, a directory…).
    case fileUnreadable(path: String, reason: String)
    /// No PEM certificate could be loaded from the file.
    case invalidCertificate(path: String, reason: String)
    /// No PEM private key could be loaded from the file (or it is encrypted).
    case invalidPrivateKey(path: String, reason: String)
    /// The private key is not the one of the certificate.
    case keyDoesNotMatchCertificate(certificatePath: String, keyPath: String)
    /// OpenSSL refused a setting or ran out of memory.
    case context(reason: String)
    /// The handshake failed (bad ClientHello, no common protocol, a
    /// certificate the client rejected or that failed verification…).
    case handshake(reason: String)
    /// A client sent a plain HTTP request to the TLS port.
    case plainHTTPRequest
    /// A record could not be read or written after the handshake.
    case protocolFailure(reason: String)

    public var description: String {
        switch self {
        case .fileNotFound(let path):
            return "\(path): no such file"
        case .fileUnreadable(let path, let reason):
            return "\(path): cannot read: \(reason)"
        case .invalidCertificate(let path, let reason):
            return "\(path): not a PEM certificate (chain): \(reason)"
        case .invalidPrivateKey(let path, let reason):
            return "\(path): not an unencrypted PEM private key: \(reason)"
        case .keyDoesNotMatchCertificate(let certificatePath, let keyPath):
            return "the private key \(keyPath) does not belong to the certificate \(certificatePath)"
        case .context(let reason):
            return "TLS setup failed: \(reason)"
        case .handshake(let reason):
            return "TLS handshake failed: \(reason)"
        case .plainHTTPRequest:
            return "plain HTTP request on the TLS port"
        case .protocolFailure(let reason):
            return "TLS failure: \(reason)"
        }
    }
}
