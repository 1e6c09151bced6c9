import Foundation
import Glibc
import Testing
import TestSupport

/// `--max-connections-per-ip N`: past N open connections from one client address,
/// new ones from it get `503` + `Retry-After` (counted in
/// `sse_gateway_connections_refused_total{reason="per_ip"}`); other addresses are not
/// affected, and a closed connection frees its slot. Clients are curl processes bound
/// to 127.0.0.1, 127.0.0.2 and 127.0.0.3 (separate addresses of the loopback), and ::1.
@Suite(.serialized)
struct PerAddressCapTests {
    /// IPv4: two streams each from 127.0.0.1 and 127.0.0.2; a third from either is refused, 127.0.0.3 is served; one ends, its address may connect again.
    @Test func capPerIPv4Address() async throws {
        try await withGatewayProcess(["--max-connections-per-ip", "2"]) { gateway in
            let base = "http://127.0.0.1:\(gateway.port)"
            var streams: [ChildProcess] = []
            defer { for stream in streams { Task { await stream.stop() } } }
            for source in ["127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"] {
                streams.append(try ChildProcess("/usr/bin/env", ["curl", "-sN", "--interface", source, base + "/events/cap"]))
            }
            #expect(try await waitForMetric(base, from: "127.0.0.3", #"sse_gateway_subscribers{channel="events"}"#, 4))

            for source in ["127.0.0.1", "127.0.0.2"] {
                let refused = try await curl(["-s", "-i", "--interface", source, base + "/events/cap"])
                #expect(refused.hasPrefix("HTTP/1.1 503"), "a third connection from \(source): \(refused.prefix(80))")
                #expect(refused.contains("Retry-After: 1\r\n"))
                #expect(refused.contains("too many connections from your address"))
            }
            let other = try await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "127.0.0.3", base + "/healthz"])
            #expect(other == "200", "another address is not affected")
            let metrics = try await metricsText(base, from: "127.0.0.3")
            #expect(metrics.contains(#"sse_gateway_connections_refused_total{reason="per_ip"} 2"#))
            #expect(metrics.contains(#"sse_gateway_connections_refused_total{reason="max_connections"} 0"#))

            // One of 127.0.0.1's streams ends: that address may connect again.
            streams[0].send(SIGTERM)
            _ = await streams[0].waitForExit(upTo: 10)
            #expect(try await waitForMetric(base, from: "127.0.0.3", #"sse_gateway_subscribers{channel="events"}"#, 3))
            let again = try await curl(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "127.0.0.1", base + "/healthz"])
            #expect(again == "200")
            for stream in streams { await stream.stop() }
            streams = []
        }
    }

    /// IPv6 (::1): two streams held, a third refused with 503; once one ends, requests are served again and the refusal was counted.
    @Test func capPerIPv6Address() async throws {
        let gateway = try ChildProcess(gatewayBinary, ["--host", "::1", "--port", "0", "--max-connections-per-ip", "2"])
        do {
            let pattern = #/listening on ::1:(\d+)/#
            _ = await gateway.stderr.wait(upTo: 10) { $0.contains(pattern) }
            guard let match = gateway.stderr.text.firstMatch(of: pattern), let port = Int(match.1) else {
                throw HarnessFailure("no start line from sse-gateway on ::1: \(gateway.stderr.text)")
            }
            let base = "http://[::1]:\(port)"
            let first = try ChildProcess("/usr/bin/env", ["curl", "-sgN", base + "/events/cap"])
            let second = try ChildProcess("/usr/bin/env", ["curl", "-sgN", base + "/events/cap"])
            // Each stream opens with `retry:`; once both have it, both are held.
            _ = await first.stdout.wait(upTo: 10) { $0.hasPrefix("retry:") }
            _ = await second.stdout.wait(upTo: 10) { $0.hasPrefix("retry:") }
            let refused = try await curl(["-sg", "-i", base + "/events/cap"])
            #expect(refused.hasPrefix("HTTP/1.1 503") && refused.contains("Retry-After: 1\r\n"), "\(refused.prefix(80))")

            first.send(SIGTERM)
            _ = await first.waitForExit(upTo: 10)
            var metrics = ""
            _ = try await eventually(upTo: 5, every: .milliseconds(100)) {
                metrics = try await curl(["-sg", base + "/metrics"])
                return metrics.contains("sse_gateway_connections")
            }
            #expect(metrics.contains(#"sse_gateway_connections_refused_total{reason="per_ip"} 1"#), "\(metrics.prefix(200))")
            await first.stop()
            await second.stop()
        } catch {
            await gateway.stop()
            throw error
        }
        await gateway.stop()
    }

    private func metricsText(_ base: String, from source: String) async throws -> String {
        try await curl(["-s", "--interface", source, base + "/metrics"])
    }

    /// Polls `/metrics` (from `source`) until `name` has `value`, up to 10 s.
    private func waitForMetric(_ base: String, from source: String, _ name: String, _ value: Int) async throws -> Bool {
        try await eventually(upTo: 10, every: .milliseconds(100)) {
            try await metricsText(base, from: source).contains("\n\(name) \(value)\n")
        }
    }

    /// Runs curl to its end and returns what it printed; fails the test if curl fails.
    private func curl(_ arguments: [String]) async throws -> String {
        let run = try await runToExit("/usr/bin/env", ["curl"] + arguments)
        guard run.ending == .exit(0) else {
            throw HarnessFailure("curl \(arguments) ended \(String(describing: run.ending)): \(run.stderr)")
        }
        return run.stdout
    }
}
