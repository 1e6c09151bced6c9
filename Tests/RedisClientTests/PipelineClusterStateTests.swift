import Testing
@testable import RedisClient

/// The pipeline's bookkeeping for Redis Cluster: `ASKING` + a command as one entry,
/// and a SUNSUBSCRIBE's replies told apart from the cluster's unasked pushes.
struct PipelineClusterStateTests {
    typealias State = PipelineState<Int, String>
    let deadline = ContinuousClock.now + .seconds(1)

    private func enqueue(_ state: inout State, replies: Int = 1, shardUnsubscribes: Set<[UInt8]> = [],
                         separateCommands: Bool = false, caller: Int) {
        _ = state.enqueue(EncodedCommand(arguments: RedisArguments(["X"]), afterAsking: false), replies: replies,
                          deadline: deadline, shardUnsubscribes: shardUnsubscribes,
                          separateCommands: separateCommands, caller: caller)
    }

    /// An error to ASKING does not end the entry early: the command's own reply is consumed by it, not handed
    /// to the next caller; the caller gets the error. Without an error it gets the command's reply.
    @Test func askingPairConsumesBothReplies() {
        var state = State()
        enqueue(&state, replies: 2, separateCommands: true, caller: 1)
        enqueue(&state, caller: 2)
        enqueue(&state, replies: 2, separateCommands: true, caller: 3)
        var resumed: [(Int, Result<RedisValue, RedisError>)] = []
        _ = state.receive(.error("ERR This instance has cluster support disabled"), into: &resumed)
        #expect(resumed.isEmpty)
        _ = state.receive(.value(.status("PONG")), into: &resumed)
        _ = state.receive(.value(.integer(7)), into: &resumed)
        _ = state.receive(.value(.status("OK")), into: &resumed)
        _ = state.receive(.value(.bulk([1])), into: &resumed)
        #expect(resumed.map(\.0) == [1, 2, 3])
        #expect(resumed[0].1 == .failure(.server("ERR This instance has cluster support disabled")))
        #expect(resumed[1].1 == .success(.integer(7)))
        #expect(resumed[2].1 == .success(.bulk([1])))
        #expect(state.isOpen && state.pendingCount == 0)
    }

    /// A `sunsubscribe` is awaited only when the oldest pending command is a SUNSUBSCRIBE of that channel.
    @Test func shardUnsubscribeIsAwaitedOnlyAtTheHead() {
        var state = State()
        #expect(!state.awaitsShardUnsubscribe(of: [1]))
        enqueue(&state, caller: 1)
        enqueue(&state, replies: 2, shardUnsubscribes: [[1], [2]], caller: 2)
        #expect(!state.awaitsShardUnsubscribe(of: [1]))
        var resumed: [(Int, Result<RedisValue, RedisError>)] = []
        _ = state.receive(.value(.status("PONG")), into: &resumed)
        #expect(state.awaitsShardUnsubscribe(of: [1]) && state.awaitsShardUnsubscribe(of: [2]))
        #expect(!state.awaitsShardUnsubscribe(of: [3]))
    }
}
