import Foundation
import Glibc
import Testing
import TestSupport

extension Reliability {
    /// SIGTERM in the middle of everything.
    @Suite struct ShutdownUnderLoad {
        static let loadSubscribers = Soak.isOn ? 10_000 : 2_000
        static let topics = 100
        static let readers = 100
        static let stalled = 40
        static let churners = 20
        static let fillerEvents = 100
        static let prefix = "load"

        static func topic(_ index: Int) -> String { "\(prefix)/\(index % topics)" }

        /// SIGTERM while sse-load's 2,000 subscribers and 8 publishers run flat out (10,000 subscribers in the soak), beside 100 readers, 40 stalled readers with full sockets (on both channels) and 20 subscribers coming and going: the gateway exits 0 within 2 s with its stop lines and no crash; every reader's stream ends with the chunked terminator, every stalled one's ends too, and so does every one of sse-load's.
        @Test func sigtermUnderLoadEndsEveryStreamAndExitsZero() async throws {
            try await withGatewayProcess { gateway in
                let port = gateway.port
                // Readers on both channels, reading until their stream ends.
                let endings = SharedValue<[SSEEnding]>([])
                let readersOpen = Counter()
                let readerTasks = (0..<Self.readers).map { index in
                    Task {
                        let channel = index.isMultiple(of: 2) ? "events" : "state"
                        let stream = try await CheckedStream.open(port: port, target: "/\(channel)/\(Self.topic(index))",
                                                                  order: channel == "events" ? .contiguous : .increasing)
                        defer { stream.close() }
                        readersOpen.increment()
                        let ending = await stream.readToEnd(within: 120)
                        endings.update { $0.append(ending) }
                        return stream.problem
                    }
                }
                defer { for task in readerTasks { task.cancel() } }
                // Stalled readers with full sockets and frames waiting: the gateway cannot
                // write their terminator, and they must not hold up the exit.
                var stalled: [StalledStream] = []
                defer { for stream in stalled { stream.close() } }
                for index in 0..<Self.stalled {
                    let channel = index.isMultiple(of: 2) ? "events" : "state"
                    stalled.append(try await StalledStream.open(port: port, target: "/\(channel)/shutdown/stalled"))
                }
                try await waitFor(readersOpen, toReach: Self.readers, upTo: 30)
                let filler = KeepAlivePublisher(port: port)
                do {
                    // 6 MiB each, more than loopback buffers hold for a client that does not read (about 4 MiB).
                    for index in 0..<Self.fillerEvents {
                        for channel in ["events", "state"] {
                            _ = try await filler.publish("/\(channel)/shutdown/stalled", payload("\(index)", size: 60 * 1024))
                        }
                    }
                } catch {
                    filler.close()
                    throw error
                }
                filler.close()

                // The load, then subscribers coming and going beside it.
                let load = try LoadTool.start(port: port, [
                    "--subscribers", "\(Self.loadSubscribers)", "--topics", "\(Self.topics)", "--topic-prefix", Self.prefix,
                    "--channel", "events", "--publishers", "8", "--rate", "0", "--size", "128",
                    "--duration", Soak.isOn ? "40s" : "5s", "--ramp", Soak.isOn ? "10s" : "2s", "--settle", "1s",
                ])
                let signalled = Flag(false), churning = Flag(true)
                let churnTask = Task { await churn(port: port, while: churning, failuresCountUntil: signalled) }
                let report: LoadReportJSON
                let took: Duration
                let published: Double
                let before: [String: Double]
                do {
                    // Once publishing is well under way: SIGTERM.
                    let deadline = ContinuousClock.now + .seconds(Soak.isOn ? 120 : 30)
                    var count = 0.0
                    while count < 1_000 && ContinuousClock.now < deadline {
                        try await Task.sleep(for: .milliseconds(100))
                        count = try await gateway.metrics()["sse_gateway_publishes_total{channel=\"events\"}"] ?? 0
                    }
                    published = count
                    #expect(published >= 1_000, "publishing had not started")
                    before = try await gateway.metrics()
                    signalled.set(true)
                    gateway.child.send(SIGTERM)
                    let ending = await gateway.child.waitForExit(upTo: 10)
                    churning.set(false)
                    #expect(ending == .exit(0))
                    took = try #require(gateway.child.timeFromSignalToExit)
                    report = try await LoadTool.report(of: load, upTo: Soak.isOn ? 180 : 60)
                } catch {
                    churning.set(false)
                    await load.stop()
                    throw error
                }
                #expect(took < .seconds(2), "exit took \(took)")

                // Every reader's stream was terminated, every stalled one's ended.
                for task in readerTasks {
                    let problem = try await task.value
                    #expect(problem == nil, "\(problem ?? "")")
                }
                let readerEndings = endings.value
                let terminated = readerEndings.filter { $0 == .terminated }.count
                #expect(terminated == Self.readers, "reader streams: \(readerEndings.filter { $0 != .terminated }.prefix(5))")
                let stalledEndings = await stalled.drainAll(within: 10)
                #expect(!stalledEndings.contains(.stillOpen), "a stalled stream was still open after the exit")
                let churned = await churnTask.value
                #expect(churned.problems.isEmpty, "\(churned.problems.prefix(5))")

                // sse-load saw each of its streams end while it ran (and nothing doubled or reordered).
                #expect(report["connections_established"] == Double(Self.loadSubscribers), "\(report.line)")
                #expect(report["slow_subscriber_disconnects"] == report["connections_established"],
                        "every stream of sse-load ended: \(report.line)")
                #expect(report["duplicates"] == 0 && report["out_of_order"] == 0, "\(report.line)")

                let log = await gateway.child.stderr.finish(upTo: 5)
                #expect(log.contains("stopping (SIGTERM)"), "\(log.suffix(2000))")
                #expect(log.split(separator: "\n").last?.hasSuffix("sse-gateway info: stopped") == true, "\(log.suffix(2000))")
                #expect(!log.contains("Fatal error") && !log.contains("Crash"), "\(log.suffix(2000))")
                Soak.report("shutdown under load: SIGTERM after \(Int(published)) publishes with "
                    + "\(Int(before["sse_gateway_connections"] ?? 0)) connections open; exit 0 after \(String(format: "%.0f ms", Double(took.components.attoseconds) / 1e15 + Double(took.components.seconds) * 1000)); "
                    + "\(terminated) of \(Self.readers) readers terminated cleanly; stalled streams: "
                    + "\(stalledEndings.filter { $0 == .terminated }.count) terminated, "
                    + "\(stalledEndings.filter { if case .cut = $0 { true } else { false } }.count) cut; "
                    + "\(churned.sessions) churn sessions; sse-load: \(report["slow_subscriber_disconnects"].map { Int($0) } ?? -1) "
                    + "of \(report["connections_established"].map { Int($0) } ?? -1) streams ended")
            }
        }

        /// Subscribers coming and going (read one event, leave with a FIN or a reset)
        /// until `churning` turns false; failures count only until `signalled` turns true.
        private func churn(port: Int, while churning: Flag,
                           failuresCountUntil signalled: Flag) async -> (sessions: Int, problems: [String]) {
            await withTaskGroup(of: (Int, [String]).self, returning: (sessions: Int, problems: [String]).self) { group in
                for worker in 0..<Self.churners {
                    group.addTask {
                        var sessions = 0
                        var problems: [String] = []
                        while churning.value {
                            sessions += 1
                            let target = "/events/\(Self.prefix)/\((worker * 7 + sessions) % Self.topics)"
                            do {
                                let stream = try await CheckedStream.open(port: port, target: target, order: .contiguous)
                                _ = try await stream.read(count: 1, within: 5)
                                if let problem = stream.problem, !signalled.value { problems.append("\(target): \(problem)") }
                                if sessions.isMultiple(of: 2) {
                                    _ = await stream.leaveGracefully(within: 5)
                                } else {
                                    stream.leaveAbruptly()
                                }
                            } catch {
                                // After the SIGTERM, refusals are expected.
                                if !signalled.value { problems.append("\(target): \(error)") }
                                try? await Task.sleep(for: .milliseconds(10))
                            }
                        }
                        return (sessions, problems)
                    }
                }
                var all = (sessions: 0, problems: [String]())
                for await (sessions, problems) in group {
                    all.sessions += sessions
                    all.problems += problems
                }
                return all
            }
        }
    }
}
