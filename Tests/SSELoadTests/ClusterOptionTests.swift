import Testing
@testable import SSELoad

/// `--url` several times (a cluster) and `--publish-to`.
struct ClusterOptionTests {
    private func parsed(_ arguments: [String]) throws -> LoadConfiguration {
        guard case .run(let configuration) = try LoadCommandLine.parse(arguments) else {
            Issue.record("expected a run for \(arguments)")
            return LoadConfiguration()
        }
        return configuration
    }

    /// One `--url` is exactly one target, as before; no `--url` is the default alone.
    @Test func oneURLIsOneTarget() throws {
        let one = try parsed(["--url", "http://127.0.0.1:9000"])
        #expect(one.targets == [LoadTarget(host: "127.0.0.1", port: 9000, basePath: "")])
        #expect(one.target == one.targets[0])
        #expect(one.publishTo == .first)
        #expect(try parsed([]).targets == [LoadTarget(host: "127.0.0.1", port: 8080, basePath: "")])
    }

    /// Each `--url` adds a node, in order (the first replaces the default), in both flag forms.
    @Test func severalURLsAreKeptInOrder() throws {
        let configuration = try parsed(["--url", "http://127.0.0.1:9001", "--subscribers", "10",
                                        "--url=http://127.0.0.1:9002/sse", "--url", "http://[::1]:9003"])
        #expect(configuration.targets == [
            LoadTarget(host: "127.0.0.1", port: 9001, basePath: ""),
            LoadTarget(host: "127.0.0.1", port: 9002, basePath: "/sse"),
            LoadTarget(host: "::1", port: 9003, basePath: ""),
        ])
        #expect(configuration.subscribers == 10)
    }

    /// `--publish-to first|all`; anything else is refused naming the flag.
    @Test func publishTo() throws {
        #expect(try parsed(["--publish-to", "all"]).publishTo == .all)
        #expect(try parsed(["--publish-to=first"]).publishTo == .first)
        do {
            _ = try LoadCommandLine.parse(["--publish-to", "each"])
            Issue.record("--publish-to each was accepted")
        } catch {
            #expect(error.message.contains("--publish-to"))
            #expect(error.message.contains("'first' or 'all'"))
        }
        // A bad second URL is refused like a bad first one.
        #expect(throws: LoadUsageError.self) {
            try LoadCommandLine.parse(["--url", "http://127.0.0.1:1", "--url", "ftp://x"])
        }
    }

    /// Subscribers: round-robin within each topic, so every topic is on every node and the nodes get equal shares.
    @Test func subscribersAreSpreadOverTheURLs() throws {
        var configuration = try parsed(["--url", "http://127.0.0.1:1", "--url", "http://127.0.0.1:2"])
        configuration.topics = 1
        #expect((0..<6).map(configuration.target(ofSubscriber:)) == [0, 1, 0, 1, 0, 1])
        for topics in [1, 2, 3, 10, 100] {
            configuration.topics = topics
            var perNode = [0, 0]
            var perTopicNode = Set<[Int]>()
            for j in 0..<1000 {
                let node = configuration.target(ofSubscriber: j)
                perNode[node] += 1
                perTopicNode.insert([configuration.topic(ofSubscriber: j), node])
            }
            #expect(perNode == [500, 500], "topics \(topics)")
            #expect(perTopicNode.count == 2 * topics, "every topic on both nodes, topics \(topics)")
        }
        configuration.targets = [configuration.targets[0]]
        #expect((0..<5).allSatisfy { configuration.target(ofSubscriber: $0) == 0 })
    }

    /// Publishers: all on the first URL, or publisher p on URL p % N with `--publish-to all`.
    @Test func publishersFollowPublishTo() throws {
        var configuration = try parsed(["--url", "http://127.0.0.1:1", "--url", "http://127.0.0.1:2", "--url", "http://127.0.0.1:3"])
        #expect((0..<4).map(configuration.target(ofPublisher:)) == [0, 0, 0, 0])
        configuration.publishTo = .all
        #expect((0..<4).map(configuration.target(ofPublisher:)) == [0, 1, 2, 0])
    }

    /// `--help` documents both; the JSON line names every URL and the publishers' choice.
    @Test func helpAndReportNameTheURLs() throws {
        guard case .help(let text) = try LoadCommandLine.parse(["--help"]) else {
            Issue.record("no help")
            return
        }
        #expect(text.contains("--publish-to first|all"))
        #expect(text.contains("once per node"))
        var configuration = try parsed(["--url", "http://127.0.0.1:1", "--url", "http://127.0.0.1:2", "--publish-to", "all"])
        configuration.topics = 1
        let report = LoadReport(configuration: configuration, stats: LoadStats(targets: 2),
                                published: PublisherResult(topics: 1), notOnLatest: 0, timeline: Timeline(startNanos: 0))
        #expect(report.jsonLine.contains(#""url":"http://127.0.0.1:1","urls":["http://127.0.0.1:1","http://127.0.0.1:2"],"publish_to":"all""#))
        #expect(report.jsonLine.contains(#""connections_per_url":[0,0]"#))
        #expect(report.summary.contains("http://127.0.0.1:1 + http://127.0.0.1:2"))
    }
}
