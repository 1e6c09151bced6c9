import Locking
import RedisClient

/// Redis Cluster: the slot map read (at start, when asked — a `MOVED`, a moved
/// channel, a lost node — and every 250 ms while a shard is down, every
/// `slotMapRefreshInterval` (5 s) otherwise) and applied: one `RedisShard` per master, matched to the shards the
/// engine has (same master, or a replica of it promoted), each with the hash tag of
/// its own keys; topics whose slot changed shard subscribe again where it says.
extension ClusterEngine {
    /// Runs until shutdown.
    func watchSlotMap(_ source: SlotMapSource) async {
        var lastFetch: ContinuousClock.Instant?
        var reported = false
        while !isShutdown, !Task.isCancelled {
            let now = ContinuousClock.now
            let anyDown = appliedMap == nil || shards.indices.contains { !shards[$0].retired && link(shard: $0) == nil }
            let interval: Duration = anyDown ? .milliseconds(250) : configuration.slotMapRefreshInterval
            if mapServed < mapRequests || lastFetch.map({ now - $0 >= interval }) ?? true {
                let served = mapRequests
                let lost = Array(lostNodes)
                lostNodes = []
                lastFetch = now
                do throws(RedisError) {
                    _ = try await source.refresh(lost: lost)
                    if let map = source.current { applyMap(map) }
                    reported = false
                } catch {
                    if !reported {
                        configuration.log("redis \(configuration.redis): no node gave the slot map (\(error)); retrying")
                        reported = true
                    }
                    if appliedMap == nil { readiness.overall(.unreachable("no node of the cluster gave its slot map (\(error))")) }
                }
                mapServed = max(mapServed, served)
                doorbellRinger.yield()
                continue
            }
            try? await configuration.clock.sleep(for: .milliseconds(25), tolerance: nil)
        }
    }

    /// Asks the watch for a fresh map (shared with other requests; subscribes wait for it).
    func requestMapRefresh(lost: [ClusterAddress] = []) {
        guard slotMaps != nil else { return }
        lostNodes.formUnion(lost)
        mapRequests += 1
    }

    /// Reads the map now (a publish's `MOVED`) and applies the newest one; false when
    /// `deadline` (the publish's) passed first. The read itself cannot be cancelled
    /// (others may share it): it goes on in a task of its own, bounded by its own
    /// timeouts, and the watch applies what it brings.
    func refreshMapNow(until deadline: ContinuousClock.Instant) async -> Bool {
        guard let slotMaps else { return true }
        let first = FirstOutcome()
        Task { _ = try? await slotMaps.refresh(); first.settle(true) }
        let timer = Task {
            do { try await Task.sleep(until: deadline, clock: .continuous) } catch { return }
            first.settle(false)
        }
        let inTime = await withCheckedContinuation { first.wait($0) }
        timer.cancel()
        if inTime, let map = slotMaps.current { applyMap(map) }
        if !inTime { requestMapRefresh() }
        return inTime
    }

    /// Makes the shards and the routing what `map` says.
    func applyMap(_ map: SlotMap) {
        guard !isShutdown, map != appliedMap else { return }
        let first = appliedMap == nil
        appliedMap = map
        var matched = Set<Int>()
        var indices: [Int] = []
        for mapShard in map.shards {
            let master = mapShard.master
            let live = shards.indices.filter { !shards[$0].retired && !matched.contains($0) }
            var index = live.first { shards[$0].clusterMaster?.address == master.address }
                ?? live.first { shards[$0].clusterNodes.contains(master.address) }
            if index == nil {
                shards.append(RedisShard())
                index = shards.count - 1
                readiness.add(shard: index!, name: master.address.description)
                newShardsContinuation.yield(index!)
            }
            let at = index!
            matched.insert(at)
            indices.append(at)
            let keys = ShardKeys(tag: ShardKeys.tag(for: master, in: map))
            let movedMaster = shards[at].clusterMaster.map { $0.address != master.address } ?? false
            let movedKeys = shards[at].keys != keys && shards[at].clusterMaster != nil
            shards[at].clusterMaster = master
            shards[at].clusterNodes = Set([master.address] + mapShard.replicas.map(\.address))
            readiness.name(shard: at, master.address.description)
            if movedKeys {
                // Its keys live under another tag now: what the old tag's epoch said is not this one's.
                shards[at].knownEpoch = nil
            }
            shards[at].keys = keys
            if movedMaster || movedKeys {
                configuration.log("redis shard \(master.address): "
                                  + (movedMaster ? "the cluster names this master for the shard's slots (failover)"
                                                 : "the shard's own keys moved to another slot"))
                requestRelink(shard: at)
                if let link = link(shard: at) {
                    linkLost(link, shard: at, because: .noMaster("the cluster moved the shard's master to \(master.address)"))
                }
            }
        }
        for index in shards.indices where !matched.contains(index) && !shards[index].retired {
            // No slot is served by it any more (its slots moved to the other masters).
            configuration.log("\(shardName(index)): serves no slot any more; its link is closed")
            // Only this shard goes away: not `.shutDown`, which Readiness takes as the whole
            // gateway shutting down (every publish, subscription and /readyz 503 for good).
            if let link = link(shard: index) {
                linkLost(link, shard: index, because: .unreachable("the shard serves no slot any more"))
            }
            shards[index].retired = true
            shards[index].phase = shards[index].phase.after(.shutdown)
            shards[index].wakeup.signal()
            readiness.retire(shard: index)
        }
        routing = ShardRouting(map: map, shardIndices: indices)
        if first {
            readiness.overall(nil)
            configuration.log("redis \(configuration.redis): \(map.shards.count) masters in the slot map")
        }
        // Topics whose slot now has another shard subscribe there and sync.
        for name in Array(followed.keys) {
            if let index = topicShard[name], routing.shard(of: name) != index { resubscribe(name) }
        }
        doorbellRinger.yield()
    }
}

/// Whichever of two tasks settles first decides (a map read or its deadline); the
/// other's word is ignored. Resumes its continuation exactly once, outside the lock.
final class FirstOutcome: Sendable {
    private enum State {
        case empty
        case waiting(CheckedContinuation<Bool, Never>)
        case settled(Bool)
        case done
    }

    private let state = Locked(State.empty)

    func wait(_ continuation: CheckedContinuation<Bool, Never>) {
        let early: Bool? = state.withLock {
            switch $0 {
            case .settled(let value):
                $0 = .done
                return value
            default:
                $0 = .waiting(continuation)
                return nil
            }
        }
        if let early { continuation.resume(returning: early) }
    }

    func settle(_ value: Bool) {
        let waiter: CheckedContinuation<Bool, Never>? = state.withLock {
            switch $0 {
            case .empty:
                $0 = .settled(value)
                return nil
            case .waiting(let continuation):
                $0 = .done
                return continuation
            case .settled, .done:
                return nil
            }
        }
        waiter?.resume(returning: value)
    }
}
