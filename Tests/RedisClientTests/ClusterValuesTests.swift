import RedisClient
import Testing

/// The Redis Cluster values without a server: hash slots (the cluster
/// specification's own examples), redirections, slot maps.
struct ClusterValuesTests {
    /// CRC16-XMODEM's check value and the specification's examples give the slots Redis gives.
    @Test func hashSlotsOfTheSpecification() {
        #expect(HashSlot(key: "123456789").value == 0x31C3 % 16_384)
        #expect(HashSlot(key: "foo").value == 12_182)
        #expect(HashSlot(key: "{user1000}.following") == HashSlot(key: "{user1000}.followers"))
        #expect(HashSlot(key: "foo{}{bar}") != HashSlot(key: "bar"))
        #expect(HashSlot(key: "foo{{bar}}zap") == HashSlot(key: "{bar"))
        #expect(HashSlot(key: "foo{bar}{zap}") == HashSlot(key: "bar"))
        #expect(HashSlot(key: "sse:{news}:id") == HashSlot(key: "news"))
        #expect(HashSlot(key: "").value == 0)
        #expect(HashSlot(16_384) == nil && HashSlot(-1) == nil && HashSlot(16_383) != nil)
    }

    /// MOVED and ASK parse into their kind, slot and address; anything else is no redirection.
    @Test func redirectionsParse() {
        let moved = ClusterRedirection(.server("MOVED 3999 127.0.0.1:6381"))
        #expect(moved == ClusterRedirection(kind: .moved, slot: HashSlot(3999)!, address: ClusterAddress(host: "127.0.0.1", port: 6381)))
        let ask = ClusterRedirection(errorMessage: "ASK 12182 ::1:7002")
        #expect(ask?.kind == .ask && ask?.address == ClusterAddress(host: "::1", port: 7002) && ask?.slot.value == 12_182)
        #expect(ClusterRedirection(errorMessage: "MOVED 5 :7000", answeringHost: "10.0.0.9")?.address.host == "10.0.0.9")
        #expect(ClusterRedirection(errorMessage: "MOVED 5 :7000") == nil)
        for refused in ["MOVED 16384 127.0.0.1:1", "MOVED 1 127.0.0.1:0", "MOVED 1", "ERR MOVED 1 a:1", "moved 1 a:1",
                        "MOVED 1 a:1 extra", "ASK x a:1", "MOVED 1 a:99999"] {
            #expect(ClusterRedirection(errorMessage: refused) == nil, "\(refused)")
        }
        #expect(ClusterRedirection(.closed) == nil)
        #expect(ClusterRefusal(errorMessage: "CLUSTERDOWN The cluster is down") == .clusterDown)
        #expect(ClusterRefusal(errorMessage: "TRYAGAIN Multiple keys request during rehashing of slot") == .tryAgain)
        #expect(ClusterRefusal(.server("READONLY You can't write against a read only replica.")) == .notMaster)
        #expect(ClusterRefusal(errorMessage: "MOVED 1 a:1") == nil)
    }

    /// A map routes each slot to its master, merges ranges, refuses a slot held twice.
    @Test func slotMapRoutes() throws {
        let a = ClusterNode(id: "a", address: ClusterAddress(host: "127.0.0.1", port: 7000))
        let b = ClusterNode(id: "b", address: ClusterAddress(host: "127.0.0.1", port: 7001))
        let map = try SlotMap(shards: [SlotMap.Shard(master: b, slots: [8192...16383]),
                                       SlotMap.Shard(master: a, slots: [100...8191, 0...99])])
        #expect(map.masters == [a, b])
        #expect(map.shards[0].slots == [0...8191] && map.shards[0].slotCount == 8192)
        #expect(map.coversEverySlot)
        #expect(map.master(for: HashSlot(8191)!) == a && map.master(for: HashSlot(8192)!) == b)
        #expect(map.route(key: Array("foo".utf8)) == ClusterRoute(slot: HashSlot(12_182)!, master: b))
        let keys = ["foo", "bar", "{foo}x"].map { Array($0.utf8) }
        #expect(map.partition(keys).byMaster[b] == [Array("foo".utf8), Array("{foo}x".utf8)])
        let partial = try SlotMap(shards: [SlotMap.Shard(master: a, slots: [0...10])])
        #expect(!partial.coversEverySlot && partial.master(for: HashSlot(11)!) == nil)
        #expect(throws: SlotMapError.self) {
            try SlotMap(shards: [SlotMap.Shard(master: a, slots: [0...10]), SlotMap.Shard(master: b, slots: [10...20])])
        }
    }

    /// CLUSTER SLOTS with an empty host (Redis's "the node you asked") takes the queried host.
    @Test func clusterSlotsReplyParses() throws {
        func node(_ host: String, _ port: Int64, _ id: String) -> RedisValue {
            .array([.bulk(Array(host.utf8)), .integer(port), .bulk(Array(id.utf8))])
        }
        let reply = RedisValue.array([
            .array([.integer(0), .integer(5), node("", 7000, "a"), node("127.0.0.1", 7003, "r")]),
            .array([.integer(6), .integer(16383), node("127.0.0.2", 7001, "b")]),
            .array([.integer(10), .integer(5), node("127.0.0.2", 7001, "b")]),
        ])
        #expect(throws: SlotMapError.self) { try SlotMap.parse(slotsReply: reply, queriedHost: "10.1.1.1") }
        let good = RedisValue.array(Array(reply.array!.prefix(2)))
        let map = try SlotMap.parse(slotsReply: good, queriedHost: "10.1.1.1")
        #expect(map.masters.map(\.address.description) == ["10.1.1.1:7000", "127.0.0.2:7001"])
        #expect(map.shards[0].replicas.map(\.id) == ["r"])
    }
}
