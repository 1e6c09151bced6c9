import Locking
import Testing
@testable import SSEGateway

/// The drain's lifecycle turn by turn (no clock: the gateway fires `.delayElapsed`),
/// the spread of its `retry:` values, and the registry that ends every stream.
struct DrainScheduleTests {
    /// With a delay: not ready and wait; the timer ends the streams; nothing after.
    @Test func delayThenEndStreams() {
        var schedule = DrainSchedule(delay: .seconds(3), spread: .seconds(5))
        #expect(schedule.phase == .serving)
        #expect(schedule.handle(.delayElapsed) == .none, "a stray timer while serving does nothing")
        #expect(schedule.handle(.stopRequested) == .notReady(wait: .seconds(3)))
        #expect(schedule.phase == .delaying)
        #expect(schedule.handle(.delayElapsed) == .endStreams)
        #expect(schedule.phase == .ended)
        #expect(schedule.handle(.stopRequested) == .none)
        #expect(schedule.handle(.delayElapsed) == .none)
    }

    /// The default delay (0 s): the streams end on the stop request itself.
    @Test func noDelayEndsAtOnce() {
        var schedule = DrainSchedule(delay: .zero, spread: .seconds(5))
        #expect(schedule.handle(.stopRequested) == .endStreams)
        #expect(schedule.phase == .ended)
    }

    /// A second stop request during the delay cuts it short.
    @Test func secondStopSkipsTheDelay() {
        var schedule = DrainSchedule(delay: .seconds(30), spread: .seconds(5))
        #expect(schedule.handle(.stopRequested) == .notReady(wait: .seconds(30)))
        #expect(schedule.handle(.stopRequested) == .endStreams)
        #expect(schedule.handle(.delayElapsed) == .none)
    }

    /// Retries cover 0…spread in milliseconds, roughly evenly (10,000 draws, a seeded generator); spread 0 gives 0.
    @Test func retriesSpreadOverTheWindow() {
        let schedule = DrainSchedule(delay: .zero, spread: .milliseconds(5_000))
        var random = SeededGenerator(seed: 42)
        var perSecond = Array(repeating: 0, count: 6)
        var lowest = Int.max, highest = Int.min
        for _ in 0..<10_000 {
            let retry = schedule.retryMilliseconds(using: &random)
            lowest = min(lowest, retry)
            highest = max(highest, retry)
            perSecond[retry / 1000] += 1
        }
        #expect(lowest >= 0 && lowest < 50 && highest <= 5_000 && highest > 4_950)
        #expect(perSecond[0..<5].allSatisfy { (1_800...2_200).contains($0) }, "\(perSecond)")
        var zero = SeededGenerator(seed: 1)
        #expect(DrainSchedule(delay: .zero, spread: .zero).retryMilliseconds(using: &zero) == 0)
    }

    /// `endAll` drains every registered stream once, marks not ready, and drains a stream registered later at once.
    @Test func registryDrainsEveryStreamAndLateOnes() {
        let registry = StreamDrain()
        let streams = (0..<3).map { _ in RecordingStream() }
        let tokens = streams.map { registry.register($0) }
        #expect(tokens.allSatisfy { $0 != nil } && registry.isReady && registry.count == 3)
        registry.remove(tokens[2]!)
        #expect(registry.endAll { 1234 } == 2)
        #expect(!registry.isReady)
        #expect(streams.map(\.retries) == [[1234], [1234], []])
        let late = RecordingStream()
        #expect(registry.register(late) == nil)
        #expect(late.retries == [1234])
        #expect(registry.count == 0)
    }
}

/// Records the retries it was drained with.
private final class RecordingStream: DrainableStream {
    private let drained = Locked<[Int]>([])
    var retries: [Int] { drained.withLock { $0 } }
    func drain(retryMilliseconds: Int) { drained.withLock { $0.append(retryMilliseconds) } }
}

/// SplitMix64: a seeded generator, so the distribution check is the same every run.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
