import Foundation
import Glibc
import HTTPCore
import StreamHub
import Testing
import TestSupport

/// The real executable stopped by a signal while streams are open.
@Suite(.serialized)
struct ShutdownTests {
    /// On SIGTERM or SIGINT with 20 open streams the process exits 0 within 2 s, every stream ends with the chunked terminator, and stderr has a start and a stop line.
    @Test(arguments: [SIGTERM, SIGINT], Transport.allCases)
    func signalEndsEveryStreamAndExitsZero(signal: Int32, transport: Transport) async throws {
        try await withGatewayProcess(over: transport) { gateway in
            _ = try await gateway.publish("/state/news", "s1")
            var streams: [SSETestClient] = []
            defer { for stream in streams { stream.close() } }
            for index in 0..<20 {
                let target = index.isMultiple(of: 2) ? "/events/news" : "/state/news"
                let (stream, head) = try await gateway.openStream(target)
                streams.append(stream)
                #expect(head?.status == 200)
                #expect(head?.headers["Transfer-Encoding"] == "chunked")
            }
            // Every stream is live: state ones replay s1, events ones get e1.
            #expect(try await gateway.publishReply("/events/news", "e1") == PublishReply(id: "1", subscribers: 10))
            for (index, stream) in streams.enumerated() {
                #expect(try await stream.nextEvent().data == (index.isMultiple(of: 2) ? "e1" : "s1"))
            }

            gateway.child.send(signal)
            #expect(await gateway.child.waitForExit(upTo: 10) == .exit(0))
            let took = try #require(gateway.child.timeFromSignalToExit)
            #expect(took < .seconds(2), "exit took \(took)")

            for stream in streams {
                #expect(await stream.ending(upTo: 5) == .terminated)
            }
            let log = await gateway.child.stderr.finish(upTo: 5)
            let name = signal == SIGTERM ? "SIGTERM" : "SIGINT"
            #expect(log.contains("listening on 127.0.0.1:\(gateway.port)"), "\(log)")
            #expect(log.contains("stopping (\(name))"), "\(log)")
            #expect(log.split(separator: "\n").last?.hasSuffix("sse-gateway info: stopped") == true, "\(log)")
        }
    }

    /// A signal sent as soon as the start line is printed still stops the process gracefully (exit 0), every time.
    @Test func signalRightAfterTheStartLineIsNeverLost() async throws {
        for round in 0..<10 {
            let gateway = try await GatewayProcess.start()
            gateway.child.send(round.isMultiple(of: 2) ? SIGTERM : SIGINT)
            let ending = await gateway.child.waitForExit(upTo: 10)
            await gateway.child.stop()
            #expect(ending == .exit(0), "round \(round): \(gateway.child.stderr.text)")
        }
    }
}
