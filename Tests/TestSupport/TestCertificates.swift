import Foundation
import Glibc
import HTTPCore

/// Throwaway certificates for tests, made with the `openssl` command in the
/// process's scratch directory the first time they are asked for (once per
/// process) and removed when the process exits. Keys never leave
/// that directory and are never committed.
///
/// All are EC P-256 (fast handshakes), signed by one test CA, and name
/// `localhost` and `127.0.0.1`; they differ in serial number and subject
/// `O=` so a client can tell which one a server presents.
public struct TestCertificates: Sendable {
    public let directory: String
    /// The CA that signed everything below; clients trust it.
    public let caCertificate: String
    /// `CN=localhost,O=first`, serial `1001`, valid for two days.
    public let serverCertificate: String
    /// The same certificate followed by the CA's: a chain file.
    public let serverChain: String
    public let serverKey: String
    /// `CN=localhost,O=second`, serial `2002`: the reload target.
    public let secondCertificate: String
    public let secondKey: String
    /// `CN=localhost,O=expired`, serial `3003`, expired yesterday.
    public let expiredCertificate: String
    public let expiredKey: String
    /// A key that belongs to no certificate here.
    public let strayKey: String
    /// A client context trusting the test CA and expecting `localhost`.
    public let client: TLSClientContext

    public static let serverSerial = "1001"
    public static let secondSerial = "2002"

    /// The process's certificates (generated on first use).
    public static let shared: TestCertificates = {
        do {
            let directory = Scratch.directory + "/certificates"
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            return try TestCertificates(directory: directory)
        } catch {
            // Tests cannot run TLS without them; say why loudly.
            fatalError("cannot generate test certificates with the openssl command: \(error)")
        }
    }()

    private init(directory: String) throws {
        self.directory = directory
        let files = try Self.generate(in: directory)
        caCertificate = files.ca
        (serverCertificate, serverKey) = files.server
        (secondCertificate, secondKey) = files.second
        (expiredCertificate, expiredKey) = files.expired
        strayKey = files.stray
        serverChain = directory + "/server-chain.pem"
        let chain = try String(contentsOfFile: serverCertificate, encoding: .utf8)
            + String(contentsOfFile: caCertificate, encoding: .utf8)
        try chain.write(toFile: serverChain, atomically: true, encoding: .utf8)
        client = try TLSClientContext(trustedCAFile: caCertificate, serverName: "localhost")
    }

    /// Runs the openssl commands; returns the paths of what they made.
    private static func generate(in directory: String) throws
        -> (ca: String, server: (String, String), second: (String, String), expired: (String, String), stray: String) {
        func path(_ name: String) -> String { directory + "/" + name }
        let config = path("openssl.cnf")
        try configuration.write(toFile: config, atomically: true, encoding: .utf8)
        let ca = path("ca.pem")
        try openssl(["req", "-x509", "-config", config, "-extensions", "ca_ext", "-newkey", "ec",
                     "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", path("ca.key"),
                     "-out", ca, "-days", "3", "-subj", "/CN=streams test CA"])
        func newKey(_ name: String) throws -> String {
            let key = path("\(name).key")
            try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key])
            return key
        }
        // One process per certificate: `req -x509 -CA` makes the key and signs it.
        func issue(_ name: String, organization: String, serial: String) throws -> (String, String) {
            let key = path("\(name).key"), certificate = path("\(name).pem")
            try openssl(["req", "-x509", "-config", config, "-extensions", "server_ext", "-CA", ca, "-CAkey", path("ca.key"),
                         "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", key,
                         "-out", certificate, "-days", "2", "-set_serial", "0x\(serial)",
                         "-subj", "/CN=localhost/O=\(organization)"])
            return (certificate, key)
        }
        // `req` refuses a negative validity, so the expired one goes through a request and `x509 -req`.
        func issueExpired() throws -> (String, String) {
            let key = path("expired.key"), request = path("expired.csr"), certificate = path("expired.pem")
            try openssl(["req", "-new", "-config", config, "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                         "-nodes", "-keyout", key, "-out", request, "-subj", "/CN=localhost/O=expired"])
            try openssl(["x509", "-req", "-in", request, "-CA", ca, "-CAkey", path("ca.key"), "-set_serial", "0x3003",
                         "-days", "-1", "-extfile", config, "-extensions", "server_ext", "-out", certificate])
            return (certificate, key)
        }
        return (ca: ca,
                server: try issue("server", organization: "first", serial: serverSerial),
                second: try issue("second", organization: "second", serial: secondSerial),
                expired: try issueExpired(),
                stray: try newKey("stray"))
    }

    /// A server context serving the test chain and key.
    public func serverContext() throws -> TLSServerContext {
        try TLSServerContext(certificateChainFile: serverChain, privateKeyFile: serverKey)
    }

    /// Copies a certificate and key to `directory` under fixed names (for
    /// tests that replace the files a server was started with).
    public func copy(certificate: String, key: String, toCertificate target: String, key targetKey: String) throws {
        for (source, destination) in [(certificate, target), (key, targetKey)] {
            let data = try Data(contentsOf: URL(fileURLWithPath: source))
            try data.write(to: URL(fileURLWithPath: destination), options: .atomic)
        }
    }

    private static func openssl(_ arguments: [String]) throws {
        let run = try Spawn.run("openssl", arguments)
        guard run.status == 0 else {
            throw GenerationFailed(command: "openssl " + arguments.joined(separator: " "), output: run.stderr)
        }
    }

    struct GenerationFailed: Error, CustomStringConvertible {
        let command: String
        let output: String
        var description: String { "\(command) failed: \(output)" }
    }

    private static let configuration = """
        [req]
        distinguished_name = dn
        prompt = no
        [dn]
        CN = unused
        [ca_ext]
        basicConstraints = critical,CA:TRUE
        keyUsage = critical,keyCertSign,cRLSign
        subjectKeyIdentifier = hash
        [server_ext]
        basicConstraints = CA:FALSE
        keyUsage = critical,digitalSignature
        extendedKeyUsage = serverAuth
        subjectAltName = DNS:localhost,IP:127.0.0.1
        subjectKeyIdentifier = hash
        authorityKeyIdentifier = keyid

        """
}
