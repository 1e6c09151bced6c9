/// The token tool of bench/jwt/run.sh (`swift build -c release --product JWTBenchmark`):
///
///   JWTBenchmark sign KEY CLAIMS      a token for CLAIMS (JSON) signed with KEY: a file
///                                     holding an RSA or EC private key PEM, or
///                                     `hmac:SECRET`; printed on standard output
///   JWTBenchmark verify KEY TOKEN N   verifies TOKEN N times with KEY (`hmac:SECRET`
///                                     or a public key PEM file) and prints the CPU
///                                     time per token: the first verification, then
///                                     the same token again (what a publisher that
///                                     reuses its token costs)
import Foundation
import Glibc
import JWT
import TestSupport

enum JWTBenchmark {
    static func main() throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        switch arguments.first {
        case "sign" where arguments.count == 3:
            let signer: TestTokens.Signer = arguments[1].hasPrefix("hmac:")
                ? .hmac(Array(arguments[1].dropFirst(5).utf8))
                : .privateKey(try String(contentsOfFile: arguments[1], encoding: .utf8))
            print(TestTokens.make(claims: arguments[2], signer: signer))
        case "verify" where arguments.count == 4:
            let key = arguments[1].hasPrefix("hmac:")
                ? try JWTKey.hmac(secret: String(arguments[1].dropFirst(5)))
                : try JWTKey.publicKey(pem: try String(contentsOfFile: arguments[1], encoding: .utf8))
            let verifier = JWTVerifier(key: key)
            let token = arguments[2]
            let count = Int(arguments[3]) ?? 10_000
            guard case .success = verifier.authorize(token, .publish, topics: ["bench/1"]) else {
                fatalError("the token does not verify or does not grant publishing to bench/1")
            }
            // First use: a verifier that never saw the token parses and checks
            // the signature; again: the same verifier recognizes it.
            let first = measure(count) { JWTVerifier(key: key).authorize(token, .publish, topics: ["bench/1"]) }
            let again = measure(count) { verifier.authorize(token, .publish, topics: ["bench/1"]) }
            print(String(format: "%@ (%d-byte token): %.2f µs of CPU on first use, %.2f µs again (%d tokens each)",
                         key.algorithm.rawValue, token.utf8.count, first, again, count))
        default:
            FileHandle.standardError.write(Data("usage: JWTBenchmark sign KEY CLAIMS | verify KEY TOKEN N\n".utf8))
            exit(2)
        }
    }
}

/// CPU microseconds per call of `body`, which must succeed every time.
/// The thread's CPU time, not the wall clock: on a shared machine the wall
/// clock also counts the time other processes had the core.
func measure(_ count: Int, _ body: () -> Result<VerifiedToken, TokenRefusal>) -> Double {
    func cpuMicroseconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
    }
    var accepted = 0
    let start = cpuMicroseconds()
    for _ in 0..<count {
        if case .success = body() { accepted += 1 }
    }
    let elapsed = cpuMicroseconds() - start
    precondition(accepted == count, "a verification failed")
    return elapsed / Double(count)
}

try JWTBenchmark.main()
