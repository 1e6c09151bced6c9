import Foundation
import Testing
import TestSupport
@testable import JWT

/// Tokens made by the `openssl` command line alone, as the README shows it.
struct OpenSSLCommandTests {
    /// An HS256 token made with `openssl base64` and `openssl dgst -hmac` in a shell verifies, with its grants.
    @Test func readmeHS256Token() throws {
        let output = Scratch.directory + "/readme-token-\(UUID().uuidString)"
        let secret = "a-secret-of-at-least-32-bytes-for-the-readme-test"
        let script = """
            b64url() { openssl base64 -A | tr '+/' '-_' | tr -d '='; }
            HEADER=$(printf '{"alg":"HS256","typ":"JWT"}' | b64url)
            PAYLOAD=$(printf '{"exp":%d,"sse":{"subscribe":["demo/*"],"publish":["demo/1"]}}' $(( $(date +%s) + 3600 )) | b64url)
            SIG=$(printf '%s' "$HEADER.$PAYLOAD" | openssl dgst -sha256 -hmac "$SECRET" -binary | b64url)
            printf '%s' "$HEADER.$PAYLOAD.$SIG" > "$OUT"
            """
        let run = try Spawn.run("/bin/sh", ["-c", "SECRET='\(secret)' OUT='\(output)'; " + script])
        #expect(run.status == 0, "\(run.stderr)")
        let token = try String(contentsOfFile: output, encoding: .utf8)
        try? FileManager.default.removeItem(atPath: output)
        let verified = try JWTVerifier(key: try JWTKey.hmac(secret: secret)).verify(token).get()
        #expect(verified.claims.grants == Grants(subscribe: [.prefix("demo")], publish: [.exact("demo/1")]))
        #expect(verified.claims.expiresAt.map { $0 > JWTVerifier.wallClock() } == true)
    }
}
