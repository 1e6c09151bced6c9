import HTTPCore
import Locking
@testable import StreamHub
import Testing

/// A clock tests move by hand: time logic is tested without sleeping.
final class ManualClock: Sendable {
    private let instant = Locked(ContinuousClock.now)

    var now: ContinuousClock.Instant { instant.withLock { $0 } }

    func advance(by duration: Duration) {
        instant.withLock { $0 = $0.advanced(by: duration) }
    }
}

/// Values collected from any thread (onFinish handlers).
final class Recorder<Value: Sendable>: Sendable {
    private let values = Locked<[Value]>([])

    var all: [Value] { values.withLock { $0 } }

    func record(_ value: Value) {
        values.withLock { $0.append(value) }
    }
}

/// Where a hub runs in these tests: on a serial Dispatch queue of its own (no executor
/// given), and on the event loop's actor executor, as the gateway runs it.
enum HubExecutor: CaseIterable, Sendable {
    case dispatchQueue
    case eventLoop

    var serialExecutor: (any SerialExecutor)? {
        switch self {
        case .dispatchQueue: return nil
        case .eventLoop: return EventLoop.shared.actorExecutor
        }
    }
}

extension HubConfiguration {
    /// A configuration reading `clock`, with `change` applied.
    static func testing(clock: ManualClock = ManualClock(), _ change: (inout HubConfiguration) -> Void = { _ in }) -> HubConfiguration {
        var configuration = HubConfiguration()
        configuration.now = { clock.now }
        change(&configuration)
        return configuration
    }
}

/// Parses frames as one byte stream; heartbeats and other comments yield nothing.
func parse(_ frames: [[UInt8]]) throws -> [SSEEvent] {
    var parser = SSEParser()
    return try frames.flatMap { frame throws(SSEParserError) in try parser.feed(frame) }
}

extension Subscription {
    /// Reads batches until `count` events arrived (or the subscription finished).
    func receive(_ count: Int) async throws -> [SSEEvent] {
        var parser = SSEParser()
        var events: [SSEEvent] = []
        while events.count < count, let batch = await nextBatch() {
            for frame in batch {
                events += try parser.feed(frame)
            }
        }
        return events
    }

    /// The frames pending right now, taken without waiting (empty if none).
    func takePending() async -> [[UInt8]] {
        guard pendingCount > 0 else { return [] }
        return await nextBatch() ?? []
    }
}

extension SSEEvent {
    /// The event's id as a number (the hub always sends decimal ids).
    var number: UInt64? { id.flatMap(UInt64.init) }
}
