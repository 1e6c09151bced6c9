import HTTPCore

/// How a test talks to the server: plain HTTP or HTTPS. Tests that hold for
/// both take it as an argument (`@Test(arguments: Transport.allCases)`), so
/// every behaviour is checked over both transports without copying a test.
public enum Transport: String, CaseIterable, Sendable, CustomStringConvertible {
    case plain
    case tls

    /// What a server is given: the test certificate over `.tls`.
    public func serverContext() throws -> TLSServerContext? {
        switch self {
        case .plain: return nil
        case .tls: return try TestCertificates.shared.serverContext()
        }
    }

    /// What a client passes to `HTTPClient.connect(…, tls:)`.
    public var client: TLSClientContext? {
        switch self {
        case .plain: return nil
        case .tls: return TestCertificates.shared.client
        }
    }

    public var description: String { rawValue }
}
