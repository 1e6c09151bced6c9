import Foundation
import Glibc
import HTTPCore
import Testing
import TestSupport

/// The executable's command line: help, bad flags, the environment, start failures.
@Suite(.serialized)
struct CommandLineTests {
    /// `--help` prints the usage with every main flag and its environment variable to stdout and exits 0.
    @Test func helpListsTheFlagsAndExitsZero() async throws {
        let run = try await runToExit(gatewayBinary, ["--help"])
        #expect(run.ending == .exit(0))
        #expect(run.stdout.hasPrefix("Usage: sse-gateway [options]\n"))
        for flag in ["--host", "--port", "--public", "--max-connections", "--heartbeat", "--retry-ms",
                     "--publish-token", "--shutdown-grace", "SSE_GATEWAY_PORT"] {
            #expect(run.stdout.contains(flag), "--help lacks \(flag)")
        }
        #expect(!run.stdout.hasSuffix("\n\n"), "--help ends with a blank line")
        #expect(run.stderr.isEmpty)
    }

    /// A bad flag or value exits 2 before starting, with one message on stderr naming the flag (and the value).
    @Test(arguments: [
        (["--port", "nope"], ["--port", "'nope'"]),
        (["--bogus"], ["--bogus"]),
        (["--port"], ["--port", "needs a value"]),
        (["--max-connections", "0"], ["--max-connections", "'0'"]),
        (["--heartbeat", "soon"], ["--heartbeat", "'soon'"]),
        (["--redis", "http://127.0.0.1:6379"], ["--redis", "redis://"]),
        (["--redis", "redis://127.0.0.1:notaport"], ["--redis", "port"]),
        (["--redis", "redis://127.0.0.1:6379/x"], ["--redis", "database"]),
    ])
    func badFlagExitsTwoNamingIt(arguments: [String], named: [String]) async throws {
        let run = try await runToExit(gatewayBinary, arguments)
        #expect(run.ending == .exit(2))
        #expect(run.stdout.isEmpty)
        for text in named { #expect(run.stderr.contains(text), "stderr: \(run.stderr)") }
        #expect(!run.stderr.contains("listening"))
    }

    /// A bad environment value exits 2 with a message naming the variable.
    @Test func badEnvironmentValueExitsTwoNamingIt() async throws {
        let run = try await runToExit(gatewayBinary, [], environment: ["SSE_GATEWAY_PORT": "nope"])
        #expect(run.ending == .exit(2))
        #expect(run.stderr.contains("SSE_GATEWAY_PORT"), "stderr: \(run.stderr)")
        #expect(run.stderr.contains("'nope'"), "stderr: \(run.stderr)")
    }

    /// Settings come from `SSE_GATEWAY_*` variables when no flag is given: port, retry delay, connection cap.
    @Test func environmentVariablesAreHonoured() async throws {
        let gateway = try await GatewayProcess.start(
            environment: ["SSE_GATEWAY_PORT": "0", "SSE_GATEWAY_RETRY_MS": "1234", "SSE_GATEWAY_MAX_CONNECTIONS": "7"],
            portFlag: false)
        do {
            #expect(gateway.port != 8080)
            #expect(gateway.child.stderr.text.contains("max connections 7"), "\(gateway.child.stderr.text)")
            let (stream, head) = try await SSETestClient.connect(port: gateway.port, target: "/events/env")
            defer { stream.close() }
            #expect(head?.status == 200)
            #expect(try await stream.retry() == 1234)
        } catch {
            await gateway.child.stop()
            throw error
        }
        await gateway.child.stop()
    }

    /// A flag wins over its environment variable.
    @Test func flagWinsOverEnvironment() async throws {
        try await withGatewayProcess(["--retry-ms", "500"], environment: ["SSE_GATEWAY_RETRY_MS": "1234"]) { gateway in
            let (stream, _) = try await SSETestClient.connect(port: gateway.port, target: "/events/env")
            defer { stream.close() }
            #expect(try await stream.retry() == 500)
        }
    }

    /// A port already in use makes the process exit non-zero with one error line naming the address, while the first gateway keeps serving.
    @Test func portInUseExitsNonZeroWithAClearError() async throws {
        try await withGatewayProcess { first in
            let run = try await runToExit(gatewayBinary, ["--port", "\(first.port)", "--public", packageRoot + "/public"])
            #expect(run.ending == .exit(1))
            let errors = run.stderr.split(separator: "\n").filter { $0.contains("sse-gateway error:") }
            #expect(errors.count == 1, "stderr: \(run.stderr)")
            #expect(errors.first?.contains("127.0.0.1:\(first.port)") == true, "stderr: \(run.stderr)")
            #expect(errors.first?.contains("Address already in use") == true, "stderr: \(run.stderr)")
            #expect(!run.stderr.contains("listening"))
            #expect(try await first.send("GET", "/healthz").status == 200)
        }
    }
}
