import StreamHub
import Testing
@testable import SSELoad

/// Parses and returns the configuration to run with, failing the test otherwise.
private func parsed(_ arguments: [String]) throws -> LoadConfiguration {
    guard case .run(let configuration) = try LoadCommandLine.parse(arguments) else {
        Issue.record("expected a run for \(arguments)")
        return LoadConfiguration()
    }
    return configuration
}

/// The message for a refused command line, nil when it was accepted.
private func refusal(_ arguments: [String]) -> String? {
    do {
        _ = try LoadCommandLine.parse(arguments)
        return nil
    } catch {
        return error.message
    }
}

/// The `sse-load` command line.
struct CommandLineTests {
    /// Every knob of the issue's example command line is read, in both `--flag value` and `--flag=value` form.
    @Test func readsEveryOption() throws {
        let configuration = try parsed([
            "--url", "http://10.0.0.7:9000/sse/", "--subscribers", "10000", "--topics=100", "--channel", "state",
            "--publishers", "8", "--rate", "250.5", "--size", "256", "--duration", "30s", "--ramp", "500ms",
            "--connect-timeout", "2m", "--settle", "0", "--topic-prefix", "bench/a", "--publishes", "77", "--json", "--stall-after", "0",
        ])
        #expect(configuration.target == LoadTarget(host: "10.0.0.7", port: 9000, basePath: "/sse"))
        #expect(configuration.subscribers == 10_000)
        #expect(configuration.topics == 100)
        #expect(configuration.channel == .state)
        #expect(configuration.publishers == 8)
        #expect(configuration.rate == 250.5)
        #expect(configuration.size == 256)
        #expect(configuration.duration == .seconds(30))
        #expect(configuration.ramp == .milliseconds(500))
        #expect(configuration.connectTimeout == .seconds(120))
        #expect(configuration.settle == .zero)
        #expect(configuration.topicPrefix == "bench/a")
        #expect(configuration.publishLimit == 77)
        #expect(configuration.stallAfter == 0)
        #expect(configuration.json)
        #expect(configuration.target.path(.state, configuration.topicName(3)) == "/sse/state/bench/a/3")
    }

    /// No arguments give the documented defaults; `--help` lists every option with its default.
    @Test func defaultsAndHelp() throws {
        #expect(try parsed([]) == LoadConfiguration())
        guard case .help(let text) = try LoadCommandLine.parse(["--subscribers", "5", "--help"]) else {
            Issue.record("--help did not answer with help")
            return
        }
        for option in LoadOption.all { #expect(text.contains("--\(option.name)")) }
        #expect(text.contains("[default: http://127.0.0.1:8080]"))
    }

    /// Bad values are refused with a message naming the flag (the caller exits 2).
    @Test func refusesBadValues() {
        #expect(refusal(["--subscribers", "-1"])?.contains("--subscribers") == true)
        #expect(refusal(["--topics", "0"])?.contains("--topics") == true)
        #expect(refusal(["--channel", "stream"])?.contains("'events' or 'state'") == true)
        #expect(refusal(["--rate", "fast"])?.contains("--rate") == true)
        #expect(refusal(["--duration", "0s"])?.contains("--duration") == true)
        #expect(refusal(["--ramp", "-1s"])?.contains("--ramp") == true)
        #expect(refusal(["--topic-prefix", "a//b"])?.contains("--topic-prefix") == true)
        #expect(refusal(["--topic-prefix", "../x"]) != nil)
        #expect(refusal(["--url"])?.contains("needs a value") == true)
        #expect(refusal(["--bogus"])?.contains("unrecognized option '--bogus'") == true)
        #expect(refusal(["extra"])?.contains("unexpected argument") == true)
        #expect(refusal(["--url", "ftp://x"])?.contains("http://") == true)
        #expect(refusal(["--url", "http://:80"]) != nil)
        #expect(refusal(["--url", "http://h:99999"]) != nil)
    }

    /// More subscribers than one process's descriptors allow are refused with the reason and the cap.
    @Test func refusesMoreThanNineteenThousandSubscribers() throws {
        #expect(try parsed(["--subscribers", "19000"]).subscribers == 19_000)
        let message = try #require(refusal(["--subscribers", "19001"]))
        #expect(message.contains("at most 19000"))
        #expect(message.contains("descriptors"))
    }

    /// https:// is refused as not supported yet, rather than silently spoken as plain HTTP.
    @Test func refusesHTTPSForNow() throws {
        let message = try #require(refusal(["--url", "https://127.0.0.1:8443"]))
        #expect(message.contains("not supported yet"))
    }

    /// IPv6 literals, default ports and base paths are understood.
    @Test func parsesURLs() throws {
        #expect(try parsed(["--url", "http://[::1]:8080"]).target == LoadTarget(host: "::1", port: 8080, basePath: ""))
        #expect(try parsed(["--url", "http://example.test"]).target.hostHeader == "example.test")
        #expect(try parsed(["--url", "http://[::1]:81/"]).target.hostHeader == "[::1]:81")
    }

    /// Durations: ms, s, m, h and bare seconds, as the gateway reads them (`DurationText`).
    @Test func parsesDurations() throws {
        #expect(try parsed(["--duration", "250ms"]).duration == .milliseconds(250))
        #expect(try parsed(["--duration", "1.5"]).duration == .milliseconds(1500))
        #expect(try parsed(["--ramp", "2m"]).ramp == .seconds(120))
        #expect(try parsed(["--settle", "1h"]).settle == .seconds(3600))
        #expect(try parsed(["--settle", "0"]).settle == .zero)
        for bad in ["", "s", "1e3", "-1s"] {
            #expect(refusal(["--duration", bad])?.contains("--duration") == true, "\(bad)")
        }
        #expect(refusal(["--duration", "0"]) != nil)
    }

    /// A publish limit is shared out round-robin: 10 over 4 publishers is 3, 3, 2, 2.
    @Test func publishLimitIsSharedOut() {
        var configuration = LoadConfiguration()
        configuration.publishers = 4
        configuration.publishLimit = 10
        #expect((0..<4).map { configuration.quota(ofPublisher: $0) } == [3, 3, 2, 2])
        configuration.publishLimit = nil
        #expect(configuration.quota(ofPublisher: 0) == nil)
    }
}
