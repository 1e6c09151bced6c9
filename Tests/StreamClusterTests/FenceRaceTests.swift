import RedisClient
@testable import StreamCluster
import StreamHub
import Testing
import TestSupport

/// A subscriber's fence registered while its topic's sync goes live must not wait out
/// `fenceTimeout` (500 ms): before the fix, about one new topic in seven did.
struct FenceRaceTests {
    @Test func newTopicsAreSubscribedWithoutWaitingOutTheFence() async throws {
        try await withCluster(engines: 1) { _, engines in
            var slow: [Int] = []
            for index in 0..<60 {
                let started = ContinuousClock.now
                let stream = try await engines[0].subscribe("fresh\(index)")
                if ContinuousClock.now - started >= .milliseconds(400) { slow.append(index) }
                stream.cancel()
                try await Task.sleep(for: .milliseconds(30))
            }
            #expect(slow.isEmpty, "subscriptions that waited out the fence: \(slow)")
        }
    }
}
