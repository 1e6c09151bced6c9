import Glibc
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

/// The HTTP version the tests' clients speak: HTTP/1.1, or HTTP/2 when
/// `SSE_TEST_HTTP=2` (prior knowledge in cleartext, ALPN `h2` over TLS).
/// scripts/test.sh runs the end-to-end suites again with it, since every rule of
/// API.md must hold over HTTP/2 too; tests about HTTP/1.1 itself skip then
/// (`.disabled(if: TestHTTP.isHTTP2, …)`, the reason given).
public enum TestHTTP {
    public static let isHTTP2: Bool = getenv("SSE_TEST_HTTP").map { String(cString: $0) == "2" } ?? false
}
