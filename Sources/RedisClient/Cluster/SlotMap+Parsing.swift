extension SlotMap {
    /// Parses a `CLUSTER SHARDS` reply (Redis 7, RESP2: each shard a flat list of
    /// `slots`, `[start, end, …]`, `nodes`, each node a flat list of `id`, `port`,
    /// `ip`, `endpoint`, `role`, `health`, …). A node's address is its `endpoint`,
    /// else its `ip`, else `queriedHost` (Redis's "same host as the one asked");
    /// a shard's master is its node whose role is `master` (the one online, when a
    /// failed-over master is listed beside its successor). Failed replicas are kept
    /// (the map says what the cluster says); a shard without slots is left out.
    public static func parse(shardsReply reply: RedisValue, queriedHost: String) throws(SlotMapError) -> SlotMap {
        guard let shardValues = reply.array else { throw SlotMapError(reason: "CLUSTER SHARDS did not return an array") }
        var shards: [Shard] = []
        for shardValue in shardValues {
            let fields = try fieldMap(shardValue, what: "a shard")
            guard let slotValues = fields["slots"]?.array, slotValues.count % 2 == 0,
                  let nodeValues = fields["nodes"]?.array else {
                throw SlotMapError(reason: "a shard without slots and nodes lists")
            }
            var ranges: [ClosedRange<Int>] = []
            for index in stride(from: 0, to: slotValues.count, by: 2) {
                ranges.append(try range(slotValues[index], slotValues[index + 1]))
            }
            var masters: [(node: ClusterNode, online: Bool)] = []
            var replicas: [ClusterNode] = []
            for nodeValue in nodeValues {
                let node = try fieldMap(nodeValue, what: "a node")
                guard let id = node["id"]?.string, let portNumber = node["port"]?.integer,
                      let port = Int(exactly: portNumber), (1...65535).contains(port) else {
                    throw SlotMapError(reason: "a node without an id and a port")
                }
                let host = [node["endpoint"]?.string, node["ip"]?.string]
                    .compactMap { $0 }.first { !$0.isEmpty && $0 != "?" } ?? queriedHost
                let parsed = ClusterNode(id: id, address: ClusterAddress(host: host, port: port))
                if node["role"]?.string == "master" {
                    masters.append((parsed, (node["health"]?.string ?? "online") == "online"))
                } else {
                    replicas.append(parsed)
                }
            }
            // Redis 7.2 groups by shard id: a failed-over master may still be listed as
            // a master beside the promoted one; the one serving is the one online.
            guard let master = (masters.first { $0.online } ?? masters.first)?.node else {
                if ranges.isEmpty { continue }
                throw SlotMapError(reason: "a shard with slots but no master")
            }
            shards.append(Shard(master: master, replicas: replicas, slots: ranges))
        }
        return try SlotMap(shards: shards)
    }

    /// Parses a `CLUSTER SLOTS` reply (every Redis Cluster: `[start, end, master,
    /// replica…]` per range, each node `[host, port, id?, …]`; a host `""` or `?` is
    /// `queriedHost`). Ranges of one master (by id, else by address) form one shard.
    public static func parse(slotsReply reply: RedisValue, queriedHost: String) throws(SlotMapError) -> SlotMap {
        guard let rangeValues = reply.array else { throw SlotMapError(reason: "CLUSTER SLOTS did not return an array") }
        var order: [String] = []
        var byMaster: [String: (master: ClusterNode, replicas: [ClusterNode], slots: [ClosedRange<Int>])] = [:]
        for rangeValue in rangeValues {
            guard let elements = rangeValue.array, elements.count >= 3 else {
                throw SlotMapError(reason: "a slot range without a master")
            }
            let slots = try range(elements[0], elements[1])
            let master = try slotsNode(elements[2], queriedHost: queriedHost)
            var replicas: [ClusterNode] = []
            for element in elements.dropFirst(3) { replicas.append(try slotsNode(element, queriedHost: queriedHost)) }
            let key = master.id.isEmpty ? master.address.description : master.id
            if byMaster[key] == nil {
                order.append(key)
                byMaster[key] = (master, replicas, [])
            }
            byMaster[key]?.slots.append(slots)
        }
        return try SlotMap(shards: order.compactMap { key in
            byMaster[key].map { Shard(master: $0.master, replicas: $0.replicas, slots: $0.slots) }
        })
    }

    private static func slotsNode(_ value: RedisValue, queriedHost: String) throws(SlotMapError) -> ClusterNode {
        guard let elements = value.array, elements.count >= 2, let host = elements[0].string,
              let portNumber = elements[1].integer, let port = Int(exactly: portNumber), (1...65535).contains(port) else {
            throw SlotMapError(reason: "a node without a host and a port")
        }
        let id = elements.count >= 3 ? elements[2].string ?? "" : ""
        let address = ClusterAddress(host: host.isEmpty || host == "?" ? queriedHost : host, port: port)
        return ClusterNode(id: id, address: address)
    }

    private static func range(_ start: RedisValue, _ end: RedisValue) throws(SlotMapError) -> ClosedRange<Int> {
        guard let low = start.integer, let high = end.integer, low >= 0, low <= high, high < Int64(HashSlot.count) else {
            throw SlotMapError(reason: "a slot range that is not two slots in order")
        }
        return Int(low)...Int(high)
    }

    /// A RESP2 map (a flat list of alternating names and values) by name.
    private static func fieldMap(_ value: RedisValue, what: String) throws(SlotMapError) -> [String: RedisValue] {
        guard let elements = value.array, elements.count % 2 == 0 else {
            throw SlotMapError(reason: "\(what) that is not a list of names and values")
        }
        var fields: [String: RedisValue] = [:]
        for index in stride(from: 0, to: elements.count, by: 2) {
            guard let name = elements[index].string else { throw SlotMapError(reason: "\(what) with a field name that is not text") }
            fields[name] = elements[index + 1]
        }
        return fields
    }
}
