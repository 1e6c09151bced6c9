import RedisClient

/// The sync script's answer for one topic (see `ClusterScripts.sync`).
struct SyncReply: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        let id: UInt64
        let event: String?
        let data: String
        /// Redis's time when it was published, in ms.
        let publishedAt: Int64
    }

    /// The last ids Redis has given on each channel.
    let lastState: UInt64
    let lastEvents: UInt64
    /// Redis's clock when it answered, in ms (ages of entries are measured against it).
    let now: Int64
    /// The state value, when newer than the one the gateway holds.
    let state: (id: UInt64, event: String?, data: String)?
    /// Events after the one the gateway holds, oldest first.
    let entries: [Entry]

    static func == (lhs: SyncReply, rhs: SyncReply) -> Bool {
        lhs.lastState == rhs.lastState && lhs.lastEvents == rhs.lastEvents && lhs.now == rhs.now
            && lhs.state?.id == rhs.state?.id && lhs.state?.data == rhs.state?.data
            && lhs.state?.event == rhs.state?.event && lhs.entries == rhs.entries
    }

    /// Decodes the script's reply; nil when it does not have the expected shape.
    init?(_ value: RedisValue) {
        guard let parts = value.array, parts.count == 5,
              let lastState = parts[0].integer, let lastEvents = parts[1].integer,
              let now = parts[2].integer, lastState >= 0, lastEvents >= 0 else { return nil }
        self.lastState = UInt64(lastState)
        self.lastEvents = UInt64(lastEvents)
        self.now = now
        if let fields = parts[3].array {
            guard fields.count == 3, let id = fields[0].integer, id > 0 else { return nil }
            let event = fields[2].string.flatMap { $0.isEmpty ? nil : $0 }
            state = (UInt64(id), event, fields[1].string ?? "")
        } else {
            state = nil
        }
        var entries: [Entry] = []
        for item in parts[4].array ?? [] {
            guard let pair = item.array, pair.count == 2, let streamID = pair[0].string,
                  let id = UInt64(streamID.prefix { $0 != "-" }), let fields = pair[1].array else { return nil }
            var data = "", event: String?, at: Int64 = now
            var index = 0
            while index + 1 < fields.count {
                switch fields[index].string {
                case "d": data = fields[index + 1].string ?? ""
                case "e": event = fields[index + 1].string.flatMap { $0.isEmpty ? nil : $0 }
                case "t": at = fields[index + 1].integer ?? now
                default: break
                }
                index += 2
            }
            entries.append(Entry(id: id, event: event, data: data, publishedAt: at))
        }
        self.entries = entries
    }
}
