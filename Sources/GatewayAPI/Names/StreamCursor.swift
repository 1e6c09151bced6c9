/// The position of a several-topic `/events` stream in each of its topics, written as
/// its `id:` line and read back from `Last-Event-ID` (API.md, "Several topics in one
/// stream"): decimal ids joined by `.`, in the order of the `topic` parameters
/// (`41.0.7`).
///
/// Promises: `format` and `parse` round-trip. A text that does not parse (a position
/// that is not 1 to 20 ASCII digits fitting a `UInt64`, an empty position, a sign,
/// spaces) or that has another number of positions than the stream has topics reads
/// as absent, so a bad header never refuses a subscription. A position newer than its
/// topic's last id is absent for that topic alone: the hub applies that rule when it
/// resumes (`Topic.replay`), as it does for a single-topic `Last-Event-ID`.
public struct StreamCursor: Sendable, Equatable {
    /// One id per topic, in parameter order.
    public var positions: [UInt64]

    public init(positions: [UInt64]) {
        self.positions = positions
    }

    /// The cursor `text` names for a stream of `topicCount` topics, or nil when it names none.
    public static func parse(_ text: String?, topicCount: Int) -> StreamCursor? {
        guard let text, topicCount >= 1 else { return nil }
        // The longest valid cursor: 20 digits per position and the dots between.
        guard text.utf8.count <= 21 * topicCount else { return nil }
        let parts = text.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == topicCount else { return nil }
        var positions: [UInt64] = []
        positions.reserveCapacity(topicCount)
        for part in parts {
            guard let id = LastEventID.parse(String(Substring(part))) else { return nil }
            positions.append(id)
        }
        return StreamCursor(positions: positions)
    }

    /// The cursor as written on the wire: `41.0.7`.
    public var text: String {
        String(decoding: bytes, as: UTF8.self)
    }

    /// The cursor's bytes, for an `id:` line assembled at write time.
    public var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(positions.count * 4)
        for (index, position) in positions.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ".")) }
            out.append(contentsOf: String(position).utf8)
        }
        return out
    }

    /// The `id: <cursor>\n` line that goes before an event of the stream.
    public var idLine: [UInt8] {
        Array("id: ".utf8) + bytes + [0x0A]
    }
}
