import Testing
@testable import RedisClient

/// The pipeline's bookkeeping, driven turn by turn without sockets or clocks.
struct PipelineStateTests {
    typealias State = PipelineState<Int, String>
    let t0 = ContinuousClock.now

    private func enqueue(_ state: inout State, _ text: String, replies: Int = 1, after: Duration = .seconds(1),
                         caller: Int) -> State.EnqueueAction {
        state.enqueue(EncodedCommand(arguments: RedisArguments([text]), afterAsking: false), replies: replies,
                      deadline: t0 + after, caller: caller)
    }

    /// What the writer takes, with each one-argument command's RESP (`*1\r\n$1\r\nA\r\n`) shown as its name.
    private func take(_ state: inout State) -> (State.WriterStep, String) {
        var buffer: [UInt8] = []
        let step = state.takeOutgoing(into: &buffer)
        let names = String(decoding: buffer, as: UTF8.self).split(separator: "\r\n").enumerated()
            .filter { $0.offset % 3 == 2 }.map(\.element)
        return (step, names.joined())
    }

    /// Commands queued while the writer is busy go out together, in order, in its next write.
    @Test func commandsQueuedDuringAWriteGoOutInOneWrite() {
        var state = State()
        guard case .none = enqueue(&state, "A", caller: 1) else { Issue.record("writer not parked yet"); return }
        #expect(take(&state) == (.write, "A"))
        _ = enqueue(&state, "B", caller: 2)
        _ = enqueue(&state, "C", caller: 3)
        #expect(take(&state) == (.write, "BC"))
        #expect(take(&state).0 == .idle)
    }

    /// A parked writer is handed back by the next command, and only once.
    @Test func parkedWriterIsResumedByTheNextCommand() {
        var state = State()
        #expect(take(&state).0 == .idle)
        let parked = state.parkWriter("writer")
        #expect(parked)
        guard case .resumeWriter("writer") = enqueue(&state, "A", caller: 1) else { Issue.record("writer not resumed"); return }
        guard case .none = enqueue(&state, "B", caller: 2) else { Issue.record("resumed twice"); return }
        #expect(take(&state) == (.write, "AB"))
    }

    /// The writer does not park when bytes arrived between its take and its park.
    @Test func writerDoesNotParkOverWaitingBytes() {
        var state = State()
        #expect(take(&state).0 == .idle)
        _ = enqueue(&state, "A", caller: 1)
        let parked = state.parkWriter("writer")
        #expect(!parked)
    }

    /// Replies go to callers in the order their commands were queued; an error reply is `.server`.
    @Test func repliesAreMatchedInOrder() {
        var state = State()
        for caller in 1...3 { _ = enqueue(&state, "X", caller: caller) }
        var resumed: [(Int, Result<RedisValue, RedisError>)] = []
        for reply in [Reply.value(.integer(10)), .error("ERR nope"), .value(.bulk([1]))] {
            let closing = state.receive(reply, into: &resumed)
            #expect(closing == nil)
        }
        #expect(resumed.map(\.0) == [1, 2, 3])
        #expect(resumed[0].1 == .success(.integer(10)))
        #expect(resumed[1].1 == .failure(.server("ERR nope")))
        #expect(resumed[2].1 == .success(.bulk([1])))
        #expect(state.pendingCount == 0)
        #expect(state.isOpen)
    }

    /// A caller awaiting several replies (SUBSCRIBE a b) is resumed after the last one, or at its first error.
    @Test func multiReplyCommandWaitsForAllItsReplies() {
        var state = State()
        _ = enqueue(&state, "SUB", replies: 2, caller: 1)
        _ = enqueue(&state, "SUB", replies: 3, caller: 2)
        var resumed: [(Int, Result<RedisValue, RedisError>)] = []
        _ = state.receive(.value(.integer(1)), into: &resumed)
        #expect(resumed.isEmpty)
        _ = state.receive(.value(.integer(2)), into: &resumed)
        #expect(resumed.map(\.0) == [1])
        _ = state.receive(.error("NOPERM"), into: &resumed)
        #expect(resumed.map(\.0) == [1, 2])
        #expect(resumed[1].1 == .failure(.server("NOPERM")))
    }

    /// A reply nobody waits for closes the pipeline.
    @Test func unexpectedReplyCloses() {
        var state = State()
        var resumed: [(Int, Result<RedisValue, RedisError>)] = []
        let closing = state.receive(.value(.null), into: &resumed)
        #expect(closing != nil)
        #expect(!state.isOpen)
    }

    /// Past the earliest deadline, callers past theirs get `.timedOut` and the rest `.closed`; the writer and handlers are handed out.
    @Test func expiryClosesWithTimedOutAndClosed() {
        var state = State()
        _ = enqueue(&state, "A", after: .seconds(5), caller: 1)
        _ = enqueue(&state, "B", after: .seconds(1), caller: 2)
        _ = enqueue(&state, "C", after: .seconds(9), caller: 3)
        _ = take(&state)
        let parked = state.parkWriter("writer")
        #expect(parked)
        let closedAlready = state.onClose { _ in }
        #expect(closedAlready == nil)
        let early = state.expire(now: t0 + .milliseconds(999))
        #expect(early == nil)
        let closing = state.expire(now: t0 + .seconds(1))
        #expect(closing?.callers.map(\.0) == [1, 2, 3])
        #expect(closing?.callers.map(\.1) == [.closed, .timedOut, .closed])
        #expect(closing?.writer == "writer")
        #expect(closing?.handlers.count == 1)
        #expect(closing?.end == .replyLate)
        #expect(!state.isOpen)
        let again = state.close(because: .closedHere)
        #expect(again == nil)
        // A handler added later is told the first reason, not the second close's.
        let lateHandler = state.onClose { _ in }
        #expect(lateHandler == .replyLate)
    }

    /// The reader waits until the earliest deadline, and never longer than the check interval.
    @Test func readDeadlineIsTheEarliestDeadlineCappedByTheInterval() {
        var state = State()
        #expect(state.readDeadline(now: t0) == t0 + .milliseconds(100))
        _ = enqueue(&state, "A", after: .seconds(5), caller: 1)
        #expect(state.readDeadline(now: t0) == t0 + .milliseconds(100))
        _ = enqueue(&state, "B", after: .milliseconds(50), caller: 2)
        #expect(state.readDeadline(now: t0) == t0 + .milliseconds(50))
        var resumed: [(Int, Result<RedisValue, RedisError>)] = []
        _ = state.receive(.value(.null), into: &resumed)
        _ = state.receive(.value(.null), into: &resumed)
        #expect(state.readDeadline(now: t0 + .seconds(1)) == t0 + .seconds(1) + .milliseconds(100))
        _ = state.close(because: .closedHere)
        #expect(state.readDeadline(now: t0) == nil)
    }

    /// Closing fails every pending caller (the first with the given error); later commands fail with `.closed` and the writer stops.
    @Test func closeFailsPendingAndLaterCommands() {
        var state = State()
        _ = enqueue(&state, "A", caller: 1)
        _ = enqueue(&state, "B", caller: 2)
        let closing = state.close(failingFirstWith: .protocolError("bad"), because: .unreadable("bad"))
        #expect(closing?.callers.map(\.1) == [.protocolError("bad"), .closed])
        guard case .fail(3, .closed) = enqueue(&state, "C", caller: 3) else { Issue.record("accepted after close"); return }
        #expect(take(&state).0 == .stop)
        let parked = state.parkWriter("writer")
        #expect(!parked)
    }

    /// A full pipeline refuses a command with `.timedOut` at once and stays open.
    @Test func fullPipelineRefusesAndStaysOpen() {
        var limits = PipelineLimits()
        limits.maxPending = 2
        limits.maxUnsentBytes = 30  // Two one-letter commands (11 bytes each) fit.
        var state = State(limits: limits)
        _ = enqueue(&state, "A", caller: 1)
        _ = enqueue(&state, "B", caller: 2)
        guard case .fail(3, .timedOut) = enqueue(&state, "C", caller: 3) else { Issue.record("over maxPending"); return }
        var other = State(limits: limits)
        guard case .fail(4, .timedOut) = enqueue(&other, String(repeating: "A", count: 30), caller: 4) else { Issue.record("over maxUnsentBytes"); return }
        #expect(state.isOpen && other.isOpen)
        #expect(state.pendingCount == 2)
    }

    /// The deadline window's minimum follows entries as they leave in order, whatever their timeouts.
    @Test func deadlineWindowTracksTheMinimum() {
        var window = DeadlineWindow()
        let deadlines: [Duration] = [.seconds(5), .seconds(3), .seconds(4), .seconds(1), .seconds(2)]
        for (sequence, after) in deadlines.enumerated() { window.add(sequence: UInt64(sequence), deadline: t0 + after) }
        var expected: [Duration] = []
        var remaining = deadlines
        while !remaining.isEmpty {
            expected.append(remaining.min()!)
            remaining.removeFirst()
        }
        for (sequence, minimum) in expected.enumerated() {
            #expect(window.earliest == t0 + minimum)
            window.remove(sequence: UInt64(sequence))
        }
        #expect(window.earliest == nil)
    }

    /// The FIFO keeps order across compactions and pops at both ends.
    @Test func fifoKeepsOrderAcrossCompaction() {
        var fifo = FIFO<Int>()
        for value in 0..<5000 { fifo.append(value) }
        for value in 0..<3000 { #expect(fifo.popFirst() == value) }
        fifo.append(5000)
        #expect(fifo.count == 2001)
        #expect(fifo.popLast() == 5000)
        #expect(fifo.first == 3000)
        #expect(Array(fifo.removeAll()) == Array(3000..<5000))
        #expect(fifo.isEmpty)
    }
}
