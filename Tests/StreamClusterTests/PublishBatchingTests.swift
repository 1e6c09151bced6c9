@testable import StreamCluster
import Testing

/// Which publishes go out together, turn by turn (`PublishBatching`).
struct PublishBatchingTests {
    @Test func theFirstPublishLeadsAndTheNextJoinUntilTaken() {
        var batching = PublishBatching<String>(maxCount: 3)
        #expect(batching.admit("a", bytes: 10) == .lead(1))
        #expect(batching.admit("b", bytes: 10) == .wait)
        #expect(batching.admit("c", bytes: 10) == .wait)
        #expect(batching.take(1) == ["a", "b", "c"])
        #expect(batching.forming == nil)
        // Taken: the next publish leads a new batch, whether or not the first was answered.
        #expect(batching.admit("d", bytes: 10) == .lead(2))
        #expect(batching.take(2) == ["d"])
    }

    @Test func aFullBatchIsClosedForItsLeaderAndTheNextPublishLeadsAnother() {
        var batching = PublishBatching<String>(maxCount: 2, maxBytes: 100)
        #expect(batching.admit("a", bytes: 10) == .lead(1))
        #expect(batching.admit("b", bytes: 10) == .wait)
        // Past the count.
        #expect(batching.admit("c", bytes: 10) == .lead(2))
        // Past the bytes.
        #expect(batching.admit("d", bytes: 95) == .lead(3))
        #expect(batching.admit("e", bytes: 5) == .wait)
        #expect(batching.closed.count == 2)
        // Leaders take their own batches in whatever order they come back.
        #expect(batching.take(3) == ["d", "e"])
        #expect(batching.take(1) == ["a", "b"])
        #expect(batching.take(2) == ["c"])
        #expect(batching.closed.isEmpty && batching.forming == nil)
    }
}
