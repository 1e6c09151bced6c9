/// Where one key (or sharded channel) goes in a Redis Cluster: its slot, and the
/// master serving that slot in the map it was routed with.
///
/// Promises: a value; `master` is the map's owner of `slot` at routing time (a
/// `MOVED` reply later means the map it came from is stale: fetch another).
public struct ClusterRoute: Sendable, Hashable, CustomStringConvertible {
    public let slot: HashSlot
    public let master: ClusterNode

    public init(slot: HashSlot, master: ClusterNode) {
        self.slot = slot
        self.master = master
    }

    public var description: String { "slot \(slot) on \(master)" }
}

extension SlotMap {
    /// The route of `key` (its hash tag's slot); nil when no master holds that slot.
    public func route<Key: Collection>(key: Key) -> ClusterRoute? where Key.Element == UInt8 {
        let slot = HashSlot(key: key)
        return master(for: slot).map { ClusterRoute(slot: slot, master: $0) }
    }

    /// `keys` grouped by the master serving them (each group in the order given),
    /// and the keys no master holds now.
    public func partition<Key: Collection>(_ keys: [Key]) -> (byMaster: [ClusterNode: [Key]], unserved: [Key])
        where Key.Element == UInt8 {
        var byMaster: [ClusterNode: [Key]] = [:]
        var unserved: [Key] = []
        for key in keys {
            if let master = master(forKey: key) { byMaster[master, default: []].append(key) } else { unserved.append(key) }
        }
        return (byMaster, unserved)
    }
}

extension HashSlot {
    /// `keys` grouped by slot, slots in ascending order, keys in the order given:
    /// one `SSUBSCRIBE` per group (Redis Cluster refuses channels of several slots
    /// in one with `CROSSSLOT`).
    public static func grouping<Key: Collection>(_ keys: [Key]) -> [(slot: HashSlot, keys: [Key])] where Key.Element == UInt8 {
        var groups: [HashSlot: [Key]] = [:]
        for key in keys { groups[HashSlot(key: key), default: []].append(key) }
        return groups.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }
}
