import Foundation
import HTTPCore
import Testing
import TestSupport

/// The real `sse-gateway` executable with token flags: a key it cannot use stops it with
/// exit status 2 and a message naming the flag; the access log never shows a token.
struct TokenStartupTests {
    let keys = TestTokenKeys.shared

    func start(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> (ending: ChildProcess.Ending?, stderr: String)
    {
        let run = try await runToExit(gatewayBinary, ["--port", "0", "--public", packageRoot + "/public"] + arguments,
                                      environment: environment)
        return (run.ending, run.stderr)
    }

    /// A PEM that is not an RSA (≥ 2048 bits) or P-256 public key, or no file at all: exit 2, naming the flag and why.
    @Test func unusablePublicKeysExit2() async throws {
        let cases: [(String, String)] = [
            (keys.p384PublicFile, "P-256"),
            (keys.ed25519PublicFile, "neither an RSA nor an EC P-256 public key"),
            (keys.rsa1024PublicFile, "an RSA key of 1024 bits; RS256 needs at least 2048"),
            (keys.rsaPrivateFile, "this is a private key"),
            (TestCertificates.shared.serverCertificate, "this is a certificate"),
            (keys.directory + "/missing.pem", "no such file"),
        ]
        for (path, reason) in cases {
            let run = try await start(["--jwt-public-key", path])
            #expect(run.ending == .exit(2), "\(path)")
            #expect(run.stderr.contains("sse-gateway: --jwt-public-key: \(path): ") && run.stderr.contains(reason),
                    "stderr: \(run.stderr)")
        }
    }

    /// A short secret, both keys, and `--subscribe-auth token` without a key: exit 2, naming the flags.
    @Test func refusedCombinationsExit2() async throws {
        let short = try await start([], environment: ["SSE_GATEWAY_JWT_SECRET": "0123456789"])
        #expect(short.ending == .exit(2))
        #expect(short.stderr.contains("SSE_GATEWAY_JWT_SECRET: expected a secret of at least 32 bytes"), "\(short.stderr)")
        let both = try await start(["--jwt-secret", String(repeating: "x", count: 40), "--jwt-public-key", keys.ecPublicFile])
        #expect(both.ending == .exit(2))
        #expect(both.stderr.contains("--jwt-public-key"), "\(both.stderr)")
        let noKey = try await start(["--subscribe-auth", "token"])
        #expect(noKey.ending == .exit(2))
        #expect(noKey.stderr.contains("--subscribe-auth token"), "\(noKey.stderr)")
    }

    /// The access log writes `access_token=…`, never the token itself.
    @Test func accessLogRedactsTokens() async throws {
        let secret = String(repeating: "z", count: 40)
        let token = TestTokens.make(claims: TestTokens.claims(subscribe: ["*"]), signer: .hmac(Array(secret.utf8)))
        try await withGatewayProcess(["--jwt-secret", secret, "--subscribe-auth", "token", "--access-log"]) { gateway in
            let (stream, head) = try await gateway.openStream("/events/log-test?x=1&access_token=\(token)")
            #expect(head?.status == 200)
            stream.close()
            let refused = try await gateway.send("GET", "/events/log-test?access%5Ftoken=\(token)x")
            #expect(refused.status == 401)
            let logged = await gateway.child.stderr.wait(upTo: 5) { $0.contains(" 401") && $0.contains(" 200") }
            #expect(logged)
            let log = gateway.child.stderr.text
            #expect(log.contains("GET /events/log-test?x=1&access_token=… 200"), "\(log)")
            #expect(log.contains("GET /events/log-test?access%5Ftoken=… 401"), "\(log)")
            #expect(!log.contains(token), "\(log)")
        }
    }
}
