import Testing
@testable import RedisClient

/// `SlotMapSource`'s bookkeeping, turn by turn: one fetch at a time, and nobody
/// answered by a fetch that began before they asked.
struct SlotMapRefreshStateTests {
    typealias State = SlotMapRefreshState<Int>

    private let map = try! SlotMap(shards: [SlotMap.Shard(master: ClusterNode(id: "a", address: ClusterAddress(host: "h", port: 1)),
                                                          slots: [0...16383])])

    /// Callers asking during a fetch wait for the next one, which starts when the first ends; then it is idle again.
    @Test func askingDuringAFetchWaitsForTheNext() {
        var state = State()
        let started = [state.request(1), state.request(2), state.request(3)]
        #expect(started == [true, false, false])
        #expect(state.fetches == 1)
        let first = state.finished(.failure(.unreachable("x")))
        #expect(first.resume == [1] && first.fetchAgain && state.fetches == 2)
        #expect(state.map == nil)
        let second = state.finished(.success(map))
        #expect(second.resume == [2, 3] && !second.fetchAgain)
        #expect(state.map == map)
        let startedAgain = state.request(4)
        #expect(startedAgain)
        let third = state.finished(.failure(.closed))
        #expect(third.resume == [4] && !third.fetchAgain && state.map == map && state.fetches == 3)
    }
}
