/// Which master of a Redis Cluster serves each of the 16,384 hash slots: the
/// shards (a master, its replicas, its slot ranges) as one node's view of the
/// cluster, read by `SlotMap.fetch` or parsed from `CLUSTER SHARDS`/`CLUSTER SLOTS`.
///
/// Promises: a value, never refreshed in place (a new map replaces it); every
/// shard has at least one slot and no two shards share a slot; `shards` are in
/// the order of their first slot; `master(for:)` is O(1). A slot no shard holds
/// (a cluster being set up, or a master lost with no replica) has no master.
public struct SlotMap: Sendable, Equatable, CustomStringConvertible {
    /// One master and what it serves.
    public struct Shard: Sendable, Equatable, CustomStringConvertible {
        public let master: ClusterNode
        public let replicas: [ClusterNode]
        /// Sorted, disjoint, not adjacent (merged).
        public let slots: [ClosedRange<Int>]

        public init(master: ClusterNode, replicas: [ClusterNode] = [], slots: [ClosedRange<Int>]) {
            self.master = master
            self.replicas = replicas
            self.slots = Self.merged(slots)
        }

        /// How many slots this shard serves.
        public var slotCount: Int { slots.reduce(0) { $0 + $1.count } }

        public var description: String {
            "\(master) slots \(slots.map { $0.lowerBound == $0.upperBound ? "\($0.lowerBound)" : "\($0.lowerBound)-\($0.upperBound)" }.joined(separator: ","))"
        }

        private static func merged(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
            var result: [ClosedRange<Int>] = []
            for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = result.last, range.lowerBound <= last.upperBound + 1 {
                    result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
                } else {
                    result.append(range)
                }
            }
            return result
        }
    }

    public let shards: [Shard]
    /// Per slot, the index of its shard in `shards`, or `Self.unassigned`.
    private let owners: [UInt16]
    private static let unassigned = UInt16.max

    /// A map of these shards (those without slots are left out).
    /// - Throws: when a slot is outside `0..<16384` or held by two shards.
    public init(shards: [Shard]) throws(SlotMapError) {
        let kept = shards.filter { !$0.slots.isEmpty }.sorted { $0.slots[0].lowerBound < $1.slots[0].lowerBound }
        var owners = [UInt16](repeating: Self.unassigned, count: HashSlot.count)
        for (index, shard) in kept.enumerated() {
            for range in shard.slots {
                guard range.lowerBound >= 0, range.upperBound < HashSlot.count else {
                    throw SlotMapError(reason: "slot range \(range) is outside 0-16383")
                }
                for slot in range {
                    guard owners[slot] == Self.unassigned else {
                        throw SlotMapError(reason: "slot \(slot) is held by two masters (\(kept[Int(owners[slot])].master) and \(shard.master))")
                    }
                    owners[slot] = UInt16(index)
                }
            }
        }
        self.shards = kept
        self.owners = owners
    }

    /// The shard serving `slot`, if any.
    public func shard(for slot: HashSlot) -> Shard? {
        let owner = owners[slot.value]
        return owner == Self.unassigned ? nil : shards[Int(owner)]
    }

    /// The master serving `slot`, if any.
    public func master(for slot: HashSlot) -> ClusterNode? {
        shard(for: slot)?.master
    }

    /// The master serving `key` (its hash tag's slot), if any.
    public func master<Key: Collection>(forKey key: Key) -> ClusterNode? where Key.Element == UInt8 {
        master(for: HashSlot(key: key))
    }

    /// The masters that serve at least one slot.
    public var masters: [ClusterNode] { shards.map(\.master) }

    /// Every node the map names, masters first: where to ask for the next map.
    public var nodes: [ClusterNode] { shards.map(\.master) + shards.flatMap(\.replicas) }

    /// Whether every slot has a master (a cluster in state `ok` has).
    public var coversEverySlot: Bool { !owners.contains(Self.unassigned) }

    public var description: String { shards.map(\.description).joined(separator: "; ") }
}

/// Why a slot map could not be read: one line.
public struct SlotMapError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "invalid cluster slot map: \(reason)" }
}

extension SlotMap {
    /// The slots whose master is not the same in `older` (a different node id,
    /// or served in one map only): the topics of these slots must be followed on
    /// their new master. Ascending.
    public func reassignedSlots(since older: SlotMap) -> [HashSlot] {
        (0..<HashSlot.count).compactMap { value in
            let slot = HashSlot(value)!
            return master(for: slot)?.id == older.master(for: slot)?.id
                && master(for: slot)?.address == older.master(for: slot)?.address ? nil : slot
        }
    }
}
