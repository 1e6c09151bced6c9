import Foundation
import Glibc
import Testing
import TestSupport

/// `curl` against the running executable, checking what curl prints; over
/// plain HTTP and over HTTPS (`curl --cacert`).
@Suite(.serialized)
struct CurlTests {
    /// `curl -N` on /state prints `retry: 2000`, then the current multi-line value as `id: 1` and one `data:` line per line, then a live event with its name; a curl publish prints the JSON reply.
    @Test(arguments: Transport.allCases)
    func curlPrintsTheStreamAsSent(_ transport: Transport) async throws {
        try await withGatewayProcess(over: transport) { gateway in
            let (base, options) = gateway.curlBase
            let first = try await curl(options + ["-s", "-X", "POST", "--data-binary", "first line\nsecond line",
                                                  base + "/state/t"])
            #expect(first == #"{"id":"1","subscribers":0}"# + "\n")

            let subscriber = try ChildProcess("/usr/bin/env", ["curl", "-sN"] + options + [base + "/state/t"])
            do {
                let replayed = "retry: 2000\n\nid: 1\ndata: first line\ndata: second line\n\n"
                _ = await subscriber.stdout.wait(upTo: 10) { $0.count >= replayed.count }
                #expect(subscriber.stdout.text == replayed)

                let second = try await curl(options + ["-s", "-X", "POST", "--data-binary", "live", base + "/state/t?event=note"])
                #expect(second == #"{"id":"2","subscribers":1}"# + "\n")
                let live = replayed + "id: 2\nevent: note\ndata: live\n\n"
                _ = await subscriber.stdout.wait(upTo: 10) { $0.count >= live.count }
                #expect(subscriber.stdout.text == live)

                // curl goes away: the gateway notices and drops the subscriber.
                subscriber.send(SIGTERM)
                #expect(await subscriber.waitForExit(upTo: 10) != nil)
                #expect(try await gateway.waitForMetric(#"sse_gateway_subscribers{channel="state"}"#, toBe: 0, within: 5) == 0)
            } catch {
                await subscriber.stop()
                throw error
            }
            await subscriber.stop()
        }
    }

    /// `curl -N` on /events prints only events published after it connected, each with its id, in order.
    @Test(arguments: Transport.allCases)
    func curlFollowsEvents(_ transport: Transport) async throws {
        try await withGatewayProcess(over: transport) { gateway in
            let (base, options) = gateway.curlBase
            _ = try await curl(options + ["-s", "-X", "POST", "--data-binary", "before", base + "/events/feed"])
            let subscriber = try ChildProcess("/usr/bin/env", ["curl", "-sN"] + options + [base + "/events/feed"])
            do {
                // The head (and with it the live subscription) comes before the retry line.
                _ = await subscriber.stdout.wait(upTo: 10) { $0.hasPrefix("retry: 2000\n\n") }
                for value in ["a", "b", "c"] {
                    _ = try await curl(options + ["-s", "-X", "POST", "--data-binary", value, base + "/events/feed"])
                }
                let expected = "retry: 2000\n\nid: 2\ndata: a\n\nid: 3\ndata: b\n\nid: 4\ndata: c\n\n"
                _ = await subscriber.stdout.wait(upTo: 10) { $0.count >= expected.count }
                #expect(subscriber.stdout.text == expected)
            } catch {
                await subscriber.stop()
                throw error
            }
            await subscriber.stop()
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
