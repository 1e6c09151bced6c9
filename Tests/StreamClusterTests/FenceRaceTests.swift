import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// A subscriber's fence registered while its topic's sync goes live must not wait out
/// `fenceTimeout`: before the fix, about one new topic in seven did. The timeout is set
/// to 5 s here so that a subscription slowed by a loaded machine (hundreds of ms) is
/// never taken for one that waited out its fence (5 s or more).
struct FenceRaceTests {
    @Test func newTopicsAreSubscribedWithoutWaitingOutTheFence() async throws {
        try await withCluster(engines: 1, { $0.fenceTimeout = .seconds(5) }) { _, engines in
            var slow: [Int] = []
            for index in 0..<60 {
                let started = ContinuousClock.now
                let stream = try await engines[0].subscribe("fresh\(index)")
                if ContinuousClock.now - started >= .seconds(4) { slow.append(index) }
                stream.cancel()
                try await Task.sleep(for: .milliseconds(30))
            }
            #expect(slow.isEmpty, "subscriptions that waited out the fence: \(slow)")
        }
    }
}
