import RedisClient
import StreamHub

/// Where a topic lives in Redis. Every key of one topic carries the topic in a
/// hash tag (`{…}`), so a topic's keys would share a slot under Redis Cluster too.
///
/// - `sse:{T}:id`: hash, fields `state` and `events`: the last id given on each channel.
///   Never expires (ids must not restart); it is the one thing kept per topic ever published.
/// - `sse:{T}:state`: hash `id`, `data`, `event`: the current state value.
/// - `sse:{T}:events`: stream, one entry per event with the explicit id `<id>-0` and
///   fields `d` (data), `e` (event name), `t` (Redis time in ms), capped at the replay
///   count; it expires after the replay age without publishes.
/// - `sse:{T}:n:<channel>`: hash, gateway id → its subscribers of the channel.
/// - `sse:gw:<gateway>`: a gateway's liveness (expires 3 s after its last refresh).
/// - pub/sub channel `sse:t:T` (`sse:<db>:t:T` for a database other than 0: pub/sub is
///   the whole server's, not a database's, and clusters on two databases of one server
///   must not hear each other): every value published to the topic, either channel;
///   on Redis Cluster the sharded channel `sse:{T}:ch` (in the topic's slot, so the
///   publish script may `SPUBLISH` on it).
///
/// What is per Redis (liveness, epoch, pause, probe) is named by `ShardKeys`.
struct ClusterKeys: Sendable {
    static let topicChannelPrefix: [UInt8] = Array("sse:t:".utf8)

    /// The topic channels' prefix for `database`.
    static func topicChannelPrefix(database: Int) -> [UInt8] {
        database == 0 ? topicChannelPrefix : Array("sse:\(database):t:".utf8)
    }

    /// The pieces around a topic in its names, shared by the strings below and by the
    /// publish script's arguments (`appendPublishKeys`), which are written without them.
    private enum Piece {
        static let tagged: StaticString = "sse:{", ids: StaticString = "}:id", state: StaticString = "}:state",
                   events: StaticString = "}:events", stateCounts: StaticString = "}:n:state",
                   eventsCounts: StaticString = "}:n:events", shardedChannel: StaticString = "}:ch",
                   channel: StaticString = "sse:t:", none: StaticString = ""

        static func counts(_ channel: Channel) -> StaticString { channel == .state ? stateCounts : eventsCounts }
    }

    let ids: String
    let state: String
    let events: String
    let topic: String

    init(topic: String) {
        self.topic = topic
        ids = "\(Piece.tagged)\(topic)\(Piece.ids)"
        state = "\(Piece.tagged)\(topic)\(Piece.state)"
        events = "\(Piece.tagged)\(topic)\(Piece.events)"
    }

    func counts(_ channel: Channel) -> String {
        "\(Piece.tagged)\(topic)\(Piece.counts(channel))"
    }

    /// Appends the publish script's keys (`ClusterScripts.publish`: ids, state,
    /// events, counts of `channel`) and, later, its pub/sub channel, named as above
    /// with no string built for them: they are written on every publish.
    static func appendPublishKeys(topic: String, channel: Channel, to arguments: inout RedisArguments) {
        arguments.append(Piece.tagged, topic, Piece.ids)
        arguments.append(Piece.tagged, topic, Piece.state)
        arguments.append(Piece.tagged, topic, Piece.events)
        arguments.append(Piece.tagged, topic, Piece.counts(channel))
    }

    /// Appends the topic's pub/sub channel, as `channel(sharded:database:)` names it.
    static func appendChannel(topic: String, sharded: Bool, database: Int, to arguments: inout RedisArguments) {
        if sharded {
            arguments.append(Piece.tagged, topic, Piece.shardedChannel)
        } else if database == 0 {
            arguments.append(Piece.channel, topic, Piece.none)
        } else {
            arguments.append(topicChannelPrefix(database: database) + Array(topic.utf8))
        }
    }

    /// The pub/sub channel of the topic, for a cluster on `database`.
    func channel(database: Int) -> [UInt8] { ClusterKeys.topicChannelPrefix(database: database) + Array(topic.utf8) }

    /// The topic's sharded pub/sub channel on Redis Cluster (same slot as its keys).
    var shardedChannel: [UInt8] { Array("\(Piece.tagged)\(topic)\(Piece.shardedChannel)".utf8) }

    /// The channel the topic's messages travel on: sharded on Redis Cluster.
    func channel(sharded: Bool, database: Int) -> [UInt8] { sharded ? shardedChannel : channel(database: database) }

    /// The topic a pub/sub channel name belongs to (`sse:t:T`, `sse:<db>:t:T` for
    /// `database`, or `sse:{T}:ch`), or nil for another channel.
    static func topic(ofChannel name: [UInt8], database: Int) -> String? {
        let prefix = topicChannelPrefix(database: database)
        if name.count > prefix.count, name.starts(with: prefix) {
            return String(decoding: name[prefix.count...], as: UTF8.self)
        }
        let open = Array("sse:{".utf8), close = Array("}:ch".utf8)
        guard name.count > open.count + close.count, name.starts(with: open), name.suffix(close.count).elementsEqual(close)
        else { return nil }
        return String(decoding: name[open.count..<(name.count - close.count)], as: UTF8.self)
    }
}

/// The keys that belong to one Redis (one shard) rather than to a topic: a
/// gateway's liveness, the epoch that tells a Redis that lost its data, the pause
/// while ids are restored (and, for a failover's, who was live and who raised), a
/// gateway's probe channel. Without a tag (one Redis, Sentinel) they are the global
/// `sse:gw:<id>`, `sse:epoch`, `sse:refloor` (`:gateways`, `:raised`), `sse:probe:<id>`;
/// on Redis Cluster each master has its own, under a hash tag
/// chosen from the slot map so that it lands on that master (`sse:{s<n>}:…`, the
/// smallest `n` that does): the publish script reads them as keys of its own node,
/// and every gateway reading the same map picks the same tag.
struct ShardKeys: Sendable, Equatable {
    /// The hash tag (nil: the whole Redis).
    let tag: String?

    static let global = ShardKeys(tag: nil)

    private func key(_ name: String) -> String { tag.map { "sse:{\($0)}:\(name)" } ?? "sse:\(name)" }

    /// A random value set when a Redis is first used: a gateway that finds it gone or
    /// changed knows Redis lost its data.
    var epoch: String { key("epoch") }
    /// Exists for a few seconds after a gateway found Redis empty (or failed over):
    /// publishes wait (503) while every gateway raises the counters of the topics it
    /// follows. (The key, and the script's `REFLOOR` refusal, keep their old names:
    /// gateways of two versions share them during an upgrade.)
    var publishPause: String { key("refloor") }
    /// Sorted set: the gateways that wrote their liveness here in the last minute (by
    /// when), read by a failover pause to know who was live. Named after the pause
    /// key, as the scripts derive it and its sibling `<pause>:raised` (the gateways
    /// that raised their counters for the running pause; `ClusterScripts.paused`), in its slot.
    var gateways: String { publishPause + ":gateways" }
    /// Before a gateway's id: its liveness (expires 3 s after its last refresh).
    var gatewayPrefix: String { key("gw:") }
    func gateway(_ id: String) -> String { gatewayPrefix + id }
    func probeChannel(gateway: String) -> [UInt8] { Array(key("probe:\(gateway)").utf8) }

    /// The tag of the master `master` in `map`: `s<n>` for the smallest `n` whose slot it serves.
    static func tag(for master: ClusterNode, in map: SlotMap) -> String? {
        for n in 0..<200_000 {
            let tag = "s\(n)"
            if map.master(for: HashSlot(key: tag))?.address == master.address { return tag }
        }
        return nil
    }
}

/// One value as the publish script sends it on the topic's pub/sub channel:
/// `s` or `e` (the channel), the decimal id, LF, the event name (may be empty), LF,
/// the data (the rest, any bytes).
struct ClusterMessage: Sendable, Equatable {
    let channel: Channel
    let id: UInt64
    let event: String?
    let data: String

    /// Decodes a payload; nil for one this version does not understand (ignored).
    init?(payload: [UInt8]) {
        guard let kind = payload.first else { return nil }
        switch kind {
        case UInt8(ascii: "s"): channel = .state
        case UInt8(ascii: "e"): channel = .events
        default: return nil
        }
        var index = 1
        var id: UInt64 = 0
        while index < payload.count, payload[index] != 0x0A {
            let digit = payload[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            let (times, overflow1) = id.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(UInt64(digit))
            guard !overflow1, !overflow2 else { return nil }
            id = sum
            index += 1
        }
        guard index > 1, index < payload.count, id > 0 else { return nil }
        index += 1
        let eventStart = index
        while index < payload.count, payload[index] != 0x0A { index += 1 }
        guard index < payload.count else { return nil }
        self.id = id
        event = index > eventStart ? String(decoding: payload[eventStart..<index], as: UTF8.self) : nil
        data = String(decoding: payload[(index + 1)...], as: UTF8.self)
    }

    init(channel: Channel, id: UInt64, event: String?, data: String) {
        self.channel = channel
        self.id = id
        self.event = event
        self.data = data
    }
}
