import Locking
import Synchronization

/// The newest acked id of every topic on both channels, as the publishers see it.
final class TopicLedger: Sendable {
    private let acked: Locked<(events: [UInt64], state: [UInt64])>

    init(topics: Int) {
        acked = Locked(([UInt64](repeating: 0, count: topics), [UInt64](repeating: 0, count: topics)))
    }

    func note(_ id: UInt64, topic: Int, channel: StreamChannel) {
        acked.withLock { acked in
            switch channel {
            case .events: acked.events[topic] = id
            case .state: acked.state[topic] = id
            }
        }
    }

    func acked(topic: Int, channel: StreamChannel) -> UInt64 {
        acked.withLock { channel == .events ? $0.events[topic] : $0.state[topic] }
    }
}

/// A flag shared by tasks.
final class Flag: Sendable {
    private let state: Atomic<Bool>
    init(_ value: Bool) { state = Atomic(value) }
    var value: Bool { state.load(ordering: .relaxed) }
    func set(_ value: Bool) { state.store(value, ordering: .relaxed) }
}

/// A counter shared by tasks.
final class Counter: Sendable {
    private let state = Atomic<Int>(0)
    var value: Int { state.load(ordering: .relaxed) }
    /// Adds one; the value before.
    @discardableResult func increment() -> Int { state.add(1, ordering: .relaxed).oldValue }
}

/// A value shared by tasks.
final class SharedValue<Value: Sendable>: Sendable {
    private let state: Locked<Value>
    init(_ value: Value) { state = Locked(value) }
    var value: Value { state.withLock { $0 } }
    func set(_ value: Value) { state.withLock { $0 = value } }
    func update(_ body: (inout Value) -> Void) { state.withLock { body(&$0) } }
}
