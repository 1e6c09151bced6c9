import HTTPCore
import Locking

/// A Redis Cluster's slot map, read again when asked: after a `MOVED`, a
/// `CLUSTERDOWN`, a `sunsubscribe` push, or a node's loss.
///
/// Promises:
/// - one fetch at a time: callers asking together share one fetch, and a caller
///   asking during a fetch gets the one after it (started as soon as that one
///   ends), so a refresh never answers with a map older than the request;
/// - a fetch asks the nodes of the last map first (the cluster as it is now),
///   then the configured seeds, those the caller reported lost last, each
///   within `timeout`: a refresh ends within (nodes + seeds) × 2 × timeout.
///   It is not interrupted by the caller's cancellation (it is bounded, and
///   shared with other callers);
/// - `current` is the last map read successfully (a failed fetch keeps it);
///   `fetches` counts fetches started (`sse_gateway_redis_slot_refreshes_total`).
public final class SlotMapSource: Sendable {
    public typealias Waiter = UnsafeContinuation<Result<SlotMap, RedisError>, Never>

    public let seeds: [RedisURL]
    private let timeout: Duration
    private let loop: EventLoop
    private let state: Locked<SlotMapRefreshState<Waiter>>
    /// Addresses reported lost, asked last (until a map without them is read).
    private let lost = Locked(Set<ClusterAddress>())

    /// `seeds`: the configured nodes (credentials taken from each); `map`: a map
    /// already read, if any.
    public init(seeds: [RedisURL], timeout: Duration, loop: EventLoop = .shared, map: SlotMap? = nil) {
        self.seeds = seeds
        self.timeout = timeout
        self.loop = loop
        self.state = Locked(SlotMapRefreshState(map: map))
    }

    /// The last map read, nil before the first.
    public var current: SlotMap? { state.withLock { $0.map } }

    /// Fetches started so far.
    public var fetches: UInt64 { state.withLock { $0.fetches } }

    /// A map read after this call began (see the type's promises).
    /// `lost`: nodes found unreachable, to be asked last.
    /// - Throws: `.unreachable` when no node gave a map (`current` is kept).
    public func refresh(lost addresses: [ClusterAddress] = []) async throws(RedisError) -> SlotMap {
        if !addresses.isEmpty { lost.withLock { $0.formUnion(addresses) } }
        let result = await withUnsafeContinuation { (waiter: Waiter) in
            if state.withLock({ $0.request(waiter) }) { startFetch() }
        }
        return try result.get()
    }

    private func startFetch() {
        Task(executorPreference: loop) { [self] in
            var outcome: Result<SlotMap, RedisError>
            repeat {
                do throws(RedisError) {
                    outcome = .success(try await SlotMap.fetch(from: candidates(), timeout: timeout, loop: loop))
                } catch {
                    outcome = .failure(error)
                }
                if case .success(let map) = outcome {
                    let named = Set(map.nodes.map(\.address))
                    lost.withLock { $0.subtract(named) }
                }
                // Resumed after the lock (see scripts/tsan-suppressions.txt for TSan's view of it).
                let (waiters, again) = state.withLock { $0.finished(outcome) }
                for waiter in waiters { waiter.resume(returning: outcome) }
                if !again { return }
            } while true
        }
    }

    /// The last map's nodes, then the seeds, the lost ones moved to the end.
    private func candidates() -> [RedisURL] {
        let credentials = seeds.first ?? RedisURL(host: "127.0.0.1")
        let known = (current?.nodes ?? []).map { $0.address.url(from: credentials) }
        let lostNow = lost.withLock { $0 }
        let all = known + seeds
        let isLost = { (url: RedisURL) in lostNow.contains(ClusterAddress(host: url.host, port: url.port)) }
        return all.filter { !isLost($0) } + all.filter(isLost)
    }
}
