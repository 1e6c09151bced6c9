import Foundation
import Glibc
import HTTPCore
import Testing
import TestSupport

/// The real `sse-gateway` executable with TLS flags: unusable files stop it
/// with exit status 2 and a message naming the flag; an expired certificate
/// is a warning; `SIGHUP` reloads the certificate without dropping streams.
struct TLSStartupTests {
    let certificates = TestCertificates.shared

    /// Starts the gateway with `arguments` on an ephemeral port and waits for it to exit.
    func start(_ arguments: [String]) async throws -> (ending: ChildProcess.Ending?, stderr: String) {
        let run = try await runToExit(gatewayBinary, ["--port", "0", "--public", packageRoot + "/public"] + arguments)
        return (run.ending, run.stderr)
    }

    /// A key that is not the certificate's: exit 2, and the message says so.
    @Test func mismatchedKeyExits2() async throws {
        let run = try await start(["--tls-cert", certificates.serverChain, "--tls-key", certificates.strayKey])
        #expect(run.ending == .exit(2))
        #expect(run.stderr.contains("sse-gateway: --tls-key: the private key \(certificates.strayKey) "
            + "does not belong to the certificate \(certificates.serverChain)"), "stderr: \(run.stderr)")
    }

    /// A missing certificate or key file: exit 2, naming the flag and the path.
    @Test func missingFilesExit2() async throws {
        let missing = certificates.directory + "/missing.pem"
        let noCertificate = try await start(["--tls-cert", missing, "--tls-key", certificates.serverKey])
        #expect(noCertificate.ending == .exit(2))
        #expect(noCertificate.stderr.contains("sse-gateway: --tls-cert: \(missing): no such file"),
                "stderr: \(noCertificate.stderr)")
        let noKey = try await start(["--tls-cert", certificates.serverChain, "--tls-key", missing])
        #expect(noKey.ending == .exit(2))
        #expect(noKey.stderr.contains("sse-gateway: --tls-key: \(missing): no such file"), "stderr: \(noKey.stderr)")
    }

    /// A file that cannot be read as one (a directory) or is not PEM: exit 2 with the reason.
    @Test func unreadableOrNonPEMFilesExit2() async throws {
        let directory = try await start(["--tls-cert", certificates.directory, "--tls-key", certificates.serverKey])
        #expect(directory.ending == .exit(2))
        #expect(directory.stderr.contains("--tls-cert: \(certificates.directory): cannot read: not a regular file"),
                "stderr: \(directory.stderr)")
        let notPEM = certificates.directory + "/openssl.cnf"
        let garbage = try await start(["--tls-cert", notPEM, "--tls-key", certificates.serverKey])
        #expect(garbage.ending == .exit(2))
        #expect(garbage.stderr.contains("--tls-cert: \(notPEM): not a PEM certificate"), "stderr: \(garbage.stderr)")
        let keyAsKey = try await start(["--tls-cert", certificates.serverChain, "--tls-key", notPEM])
        #expect(keyAsKey.ending == .exit(2))
        #expect(keyAsKey.stderr.contains("--tls-key: \(notPEM): not an unencrypted PEM private key"),
                "stderr: \(keyAsKey.stderr)")
    }

    /// Only one of the two flags: exit 2, naming the missing one.
    @Test func oneFlagWithoutTheOtherExits2() async throws {
        let run = try await start(["--tls-cert", certificates.serverChain])
        #expect(run.ending == .exit(2))
        #expect(run.stderr.contains("--tls-cert (or SSE_GATEWAY_TLS_CERT) was given without --tls-key"),
                "stderr: \(run.stderr)")
    }

    /// An expired certificate starts the gateway with a warning, and it is served.
    @Test func expiredCertificateWarnsAndServes() async throws {
        try await withGatewayProcess(["--tls-cert", certificates.expiredCertificate,
                                      "--tls-key", certificates.expiredKey]) { gateway in
            let warning = "warning: --tls-cert \(certificates.expiredCertificate): the certificate "
                + "O=expired,CN=localhost expired on"
            #expect(await gateway.child.stderr.wait(upTo: 10) { $0.contains(warning) }, "\(gateway.child.stderr.text)")
            let unverified = try TLSClientContext(trustedCAFile: certificates.caCertificate, serverName: "localhost",
                                                  verifyPeer: false)
            let client = try await HTTPClient.connect(port: gateway.port, deadline: .now + .seconds(10), tls: unverified)
            defer { client.close() }
            #expect(client.connection.tlsPeerCertificate?.serialNumber == "3003")
            try await client.request("GET", "/healthz")
            #expect(try await client.response(deadline: .now + .seconds(10)).status == 200)
            // A verifying client refuses it, which is why the warning matters.
            await #expect(throws: TLSError.self) {
                try await HTTPClient.connect(port: gateway.port, deadline: .now + .seconds(10), tls: certificates.client)
            }
        }
    }

    /// `SIGHUP` reloads the files: an open stream survives, a new connection sees the new
    /// certificate; a reload of broken files is logged and the certificate stays.
    @Test func sighupReloadsTheCertificate() async throws {
        let directory = certificates.directory + "/sighup-\(UInt64.random(in: 0...UInt64.max))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let certificate = directory + "/cert.pem", key = directory + "/key.pem"
        try certificates.copy(certificate: certificates.serverChain, key: certificates.serverKey,
                              toCertificate: certificate, key: key)
        try await withGatewayProcess(["--tls-cert", certificate, "--tls-key", key], over: .tls) { gateway in
            func servedSerial() async throws -> String? {
                let client = try await gateway.connect()
                defer { client.close() }
                return client.connection.tlsPeerCertificate?.serialNumber
            }
            #expect(try await servedSerial() == TestCertificates.serverSerial)
            let (stream, head) = try await gateway.openStream("/events/hup")
            defer { stream.close() }
            #expect(head?.status == 200)

            try certificates.copy(certificate: certificates.secondCertificate, key: certificates.secondKey,
                                  toCertificate: certificate, key: key)
            gateway.child.send(SIGHUP)
            #expect(await gateway.child.stderr.wait(upTo: 10) { $0.contains("reloaded the TLS certificate") })
            #expect(try await servedSerial() == TestCertificates.secondSerial)
            #expect(try await gateway.publishReply("/events/hup", "still here") == PublishReply(id: "1", subscribers: 1))
            #expect(try await stream.nextEvent().data == "still here")

            try Data("broken".utf8).write(to: URL(fileURLWithPath: key))
            gateway.child.send(SIGHUP)
            #expect(await gateway.child.stderr.wait(upTo: 10) {
                $0.contains("TLS reload failed, still serving the previous certificate")
            })
            #expect(gateway.child.isRunning)
            #expect(try await servedSerial() == TestCertificates.secondSerial)
        }
    }
}
