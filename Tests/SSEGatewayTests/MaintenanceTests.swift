import Locking
@testable import StreamHub
import Testing
@testable import SSEGateway

/// The gateway's maintenance loop (`Maintenance`) on a manual clock, turn by turn:
/// it sleeps until the next deadline, and a heartbeat goes out the moment a
/// subscriber's silence reaches the interval, not on the next once-a-second check.
@Suite(.timeLimit(.minutes(1)))
struct MaintenanceTests {
    /// A subscriber that joined at 3.4 s of a 10 s interval gets its heartbeat at 13.4 s exactly; the one silent since 0 s at 10 s, none before.
    @Test func heartbeatsWhenEachSilenceEnds() async throws {
        let clock = ManualClock()
        let t0 = clock.now
        var configuration = HubConfiguration()
        configuration.now = { clock.now }
        let hub = Hub(configuration: configuration)
        let early = await hub.subscribe(topic: "a", channel: .events, lastEventID: nil)
        var sleeps = clock.sleeps.makeAsyncIterator()
        let running = Task { await Maintenance(engine: hub, heartbeatInterval: .seconds(10), clock: clock).run() }
        defer { running.cancel() }
        // Turn 1: asleep until the first sweep. Woken at 3.4 s, when the second subscriber joins.
        #expect(await sleeps.next() == t0 + .seconds(1))
        clock.advance(to: t0 + .milliseconds(3_400))
        #expect(await sleeps.next() == t0 + .milliseconds(4_400))
        let late = await hub.subscribe(topic: "b", channel: .state, lastEventID: nil)
        // Woken just before 10 s: nobody's silence has ended; the next wake-up is at 10 s exactly.
        clock.advance(to: t0 + .milliseconds(9_999))
        #expect(await sleeps.next() == t0 + .seconds(10))
        #expect(early.pendingCount == 0 && late.pendingCount == 0)
        // 10 s: `early`'s heartbeat, its stream's next frame.
        clock.advance(to: t0 + .seconds(10))
        #expect(await early.nextBatch() == [SSEEncoder.heartbeat])
        #expect(late.pendingCount == 0)
        // The sweeps' wake-ups (each a second after the last), until the one `late`'s silence asks for.
        var deadline = try #require(await sleeps.next())
        var turns = 0
        while deadline < t0 + .milliseconds(13_400), turns < 10 {
            #expect(late.pendingCount == 0)
            clock.advance(to: deadline)
            deadline = try #require(await sleeps.next())
            turns += 1
        }
        try #require(deadline == t0 + .milliseconds(13_400))
        clock.advance(to: deadline)
        #expect(await late.nextBatch() == [SSEEncoder.heartbeat])
    }
}

/// A clock a test moves by hand: a `sleep` returns once `advance` reaches its deadline
/// (throws at once when its task is cancelled), and every sleep's deadline is
/// announced on `sleeps`, so a test knows when the code under test went to sleep and
/// until when. Sleepers are resumed after the lock is released.
private final class ManualClock: Clock {
    typealias Instant = ContinuousClock.Instant

    private struct Sleeper {
        let id: UInt64
        let deadline: Instant
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Instant
        var sleepers: [Sleeper] = []
        var nextID: UInt64 = 0
        /// Sleeps cancelled before their continuation was registered.
        var cancelled: Set<UInt64> = []
    }

    private let state: Locked<State>
    /// Each sleep's deadline, in the order the sleeps began.
    let sleeps: AsyncStream<Instant>
    private let announce: AsyncStream<Instant>.Continuation

    init(start: Instant = .now) {
        state = Locked(State(now: start))
        (sleeps, announce) = AsyncStream.makeStream(of: Instant.self)
    }

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }

    /// Moves the time to `instant` and wakes every sleeper whose deadline it reached.
    func advance(to instant: Instant) {
        let due = state.withLock { state in
            state.now = max(state.now, instant)
            let now = state.now
            defer { state.sleepers.removeAll { $0.deadline <= now } }
            return state.sleepers.filter { $0.deadline <= now }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        let id = state.withLock { state in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Now { case wait, wake, cancel }
                let now = state.withLock { state -> Now in
                    if state.cancelled.remove(id) != nil { return .cancel }
                    if deadline <= state.now { return .wake }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return .wait
                }
                switch now {
                case .wait: announce.yield(deadline)
                case .wake: continuation.resume()
                case .cancel: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let sleeper = state.withLock { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
