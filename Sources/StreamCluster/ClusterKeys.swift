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
/// - pub/sub channel `sse:t:T`: every value published to the topic, either channel.
struct ClusterKeys: Sendable {
    static let topicChannelPrefix: [UInt8] = Array("sse:t:".utf8)
    static let gatewayPrefix = "sse:gw:"
    /// A random value set when a Redis is first used: a gateway that finds it gone or
    /// changed knows Redis lost its data.
    static let epoch = "sse:epoch"
    /// Exists for a few seconds after a gateway found Redis empty: publishes wait
    /// (503) while every gateway raises the counters of the topics it follows. (The
    /// key, and the script's `REFLOOR` refusal, keep their old names: gateways of two
    /// versions share them during an upgrade.)
    static let publishPause = "sse:refloor"

    let ids: String
    let state: String
    let events: String
    let topic: String

    init(topic: String) {
        self.topic = topic
        ids = "sse:{\(topic)}:id"
        state = "sse:{\(topic)}:state"
        events = "sse:{\(topic)}:events"
    }

    func counts(_ channel: Channel) -> String {
        "sse:{\(topic)}:n:\(channel.rawValue)"
    }

    /// The pub/sub channel of the topic.
    var channel: [UInt8] { ClusterKeys.topicChannelPrefix + Array(topic.utf8) }

    /// The topic a pub/sub channel name belongs to, or nil for another channel.
    static func topic(ofChannel name: [UInt8]) -> String? {
        guard name.count > topicChannelPrefix.count, name.starts(with: topicChannelPrefix) else { return nil }
        return String(decoding: name[topicChannelPrefix.count...], as: UTF8.self)
    }

    /// The probe channel of one gateway (see `ClusterEngine`'s link monitor).
    static func probeChannel(gateway: String) -> [UInt8] {
        Array("sse:probe:\(gateway)".utf8)
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
