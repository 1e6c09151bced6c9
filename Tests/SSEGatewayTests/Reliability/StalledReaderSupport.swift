import Locking
import Foundation
import Synchronization
import Testing
import TestSupport

/// The subscribers that read, each in a task of its own: they open, run the
/// test's reading, then stay subscribed until `release()` so the test can look
/// at the gateway with them still there.
struct Readers: Sendable {
    let port: Int
    let targets: [String]
    let order: CheckedStream.IDOrder
    let progress: ReaderProgress
    /// Makes the data check of each reader.
    private let makeCheck: @Sendable () -> (UInt64, String) -> String?
    private let opened = Counter()
    private let done = Counter()
    private let held = Flag(true)

    /// Reader i subscribes to `targets[i]`.
    init(port: Int, targets: [String], order: CheckedStream.IDOrder,
         check makeCheck: @escaping @Sendable () -> (UInt64, String) -> String? = { PublisherSequences().check }) {
        self.port = port
        self.targets = targets
        self.order = order
        self.makeCheck = makeCheck
        progress = ReaderProgress(targets.count)
    }

    /// `count` readers of one target.
    init(port: Int, target: String, order: CheckedStream.IDOrder, count: Int) {
        self.init(port: port, targets: Array(repeating: target, count: count), order: order)
    }

    var count: Int { targets.count }

    /// Runs the readers to the end (after `release()`); what each saw, by index.
    func run(_ body: @escaping @Sendable (CheckedStream, Int) async throws -> Bool) async throws -> [ReaderResult] {
        try await withThrowingTaskGroup(of: ReaderResult.self, returning: [ReaderResult].self) { group in
            for index in targets.indices {
                group.addTask {
                    let stream = try await CheckedStream.open(port: port, target: targets[index], order: order,
                                                              check: makeCheck(),
                                                              onEvents: { progress.set($0, reader: index) })
                    defer { stream.close() }
                    opened.increment()
                    let complete = try await body(stream, index)
                    let result = ReaderResult(index: index, count: stream.count, first: stream.first, last: stream.last,
                                              lastTag: stream.lastData.map { String(payloadTag($0)) },
                                              problem: stream.problem ?? (complete ? nil : "stopped at \(stream.count) events, id \(stream.last ?? 0)"))
                    done.increment()
                    let deadline = ContinuousClock.now + .seconds(120)
                    while held.value && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
                    return result
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.index < $1.index }
        }
    }

    /// Waits (up to 20 s) until every reader is subscribed.
    func waitUntilOpen() async throws {
        try await waitFor(opened, toReach: count, upTo: 20)
    }

    /// Waits (up to 60 s) until every reader finished reading; what they saw is returned by `run` after `release()`.
    func waitUntilRead() async throws {
        try await waitFor(done, toReach: count, upTo: 60)
    }

    /// Lets the readers leave.
    func release() { held.set(false) }
}

/// How many events each reader has, for publishers that must not outrun them.
final class ReaderProgress: Sendable {
    private let counts: Locked<[Int]>

    init(_ readers: Int) {
        counts = Locked([Int](repeating: 0, count: readers))
    }

    func set(_ count: Int, reader: Int) { counts.withLock { $0[reader] = count } }

    var slowest: Int { counts.withLock { $0.min() ?? 0 } }
}

/// What one reader saw.
struct ReaderResult: Sendable {
    var index: Int
    var count: Int
    var first: UInt64?
    var last: UInt64?
    var lastTag: String?
    var problem: String?
}

/// Publishers' tags are `p<k>.<sequence>`: each publisher's sequences must arrive in order.
final class PublisherSequences {
    private var last: [Int: Int] = [:]

    func check(_ id: UInt64, _ data: String) -> String? {
        let parts = payloadTag(data).dropFirst().split(separator: ".").compactMap { Int($0) }
        guard parts.count == 2 else { return "data \(data.prefix(24))" }
        defer { last[parts[0]] = parts[1] }
        if let previous = last[parts[0]], parts[1] <= previous {
            return "publisher \(parts[0])'s \(parts[1]) after its \(previous)"
        }
        return nil
    }
}

/// Waits (up to `seconds`) until `counter` reaches `value`.
func waitFor(_ counter: Counter, toReach value: Int, upTo seconds: Int) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while counter.value < value {
        guard ContinuousClock.now < deadline else {
            throw HarnessFailure("only \(counter.value) of \(value) ready within \(seconds) s")
        }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// What the publishers of `publishAll` did.
struct Published: Sendable {
    /// Every id the replies carried.
    var ids: Set<UInt64> = []
    /// The publish with the highest id, and its tag.
    var newest: (id: UInt64, tag: String) = (0, "")
    var took: Duration = .zero
}

/// `StalledReaders.events` publishes of `StalledReaders.size` bytes to `target` by
/// `StalledReaders.publishers` keep-alive publishers (publisher k's n-th is tagged
/// `p<k>.<n>`); with `progress`, none runs more than `lead` publishes ahead of the
/// slowest reader (waiting at most 30 s for it).
func publishAll(port: Int, target: String, progress: ReaderProgress?, lead: Int) async throws -> Published {
    typealias Stalled = Reliability.StalledReaders
    let sent = Counter()
    let start = ContinuousClock.now
    var published = try await withThrowingTaskGroup(of: Published.self, returning: Published.self) { group in
        for publisherIndex in 0..<Stalled.publishers {
            group.addTask {
                let publisher = KeepAlivePublisher(port: port)
                defer { publisher.close() }
                var mine = Published()
                var sequence = 0
                while true {
                    let number = sent.increment()
                    if number >= Stalled.events { break }
                    if let progress {
                        let deadline = ContinuousClock.now + .seconds(30)
                        while number - progress.slowest > lead {
                            guard ContinuousClock.now < deadline else {
                                throw HarnessFailure("the readers stopped at \(progress.slowest) events")
                            }
                            try await Task.sleep(for: .milliseconds(1))
                        }
                    }
                    sequence += 1
                    let tag = "p\(publisherIndex).\(sequence)"
                    let id = try await publisher.publish(target, payload(tag, size: Stalled.size))
                    mine.ids.insert(id)
                    if id > mine.newest.id { mine.newest = (id, tag) }
                }
                return mine
            }
        }
        var all = Published()
        for try await one in group {
            all.ids.formUnion(one.ids)
            if one.newest.id > all.newest.id { all.newest = one.newest }
        }
        return all
    }
    published.took = ContinuousClock.now - start
    return published
}
