import HTTPCore

/// Turns `--tls-cert`/`--tls-key` into the server's TLS context, with the
/// startup errors and warnings the gateway promises: a file that is missing,
/// unreadable or not PEM, or a key that does not match the certificate,
/// stops the start with a `ConfigurationError` naming the flag (exit 2); an
/// expired certificate is logged as a warning and served anyway.
enum TLSSetup {
    /// The TLS context, or nil when neither flag was given (plain HTTP).
    static func load(_ configuration: GatewayConfiguration) throws(ConfigurationError) -> TLSServerContext? {
        guard let certificate = configuration.tlsCertificate, let key = configuration.tlsKey else { return nil }
        let tls: TLSServerContext
        do {
            tls = try TLSServerContext(certificateChainFile: certificate, privateKeyFile: key,
                                       http2: configuration.http2)
        } catch {
            throw ConfigurationError(message: message(for: error, certificate: certificate, key: key))
        }
        warnIfExpired(tls.context, path: certificate)
        return tls
    }

    static func warnIfExpired(_ context: TLSContext, path: String) {
        guard let certificate = context.certificate, certificate.isExpired() else { return }
        Log.warning("--tls-cert \(path): the certificate \(certificate.subject) expired on "
            + "\(certificate.expiry); serving it anyway, clients will refuse it")
    }

    /// The error, prefixed with the flag whose file is at fault.
    static func message(for error: TLSError, certificate: String, key: String) -> String {
        switch error {
        case .fileNotFound(let path), .fileUnreadable(let path, _):
            return "\(path == certificate ? "--tls-cert" : "--tls-key"): \(error)"
        case .invalidCertificate:
            return "--tls-cert: \(error)"
        case .invalidPrivateKey, .keyDoesNotMatchCertificate:
            return "--tls-key: \(error)"
        case .context, .handshake, .plainHTTPRequest, .protocolFailure:
            return "--tls-cert/--tls-key: \(error)"
        }
    }
}
