/// What one stream follows: its topics, in order (a topic's index is its *slot*,
/// each slot with its own position), and the format its frames take. A stream is
/// always a set of slots:
///
/// - `/events/<topic>` and `/state/<topic>`: one slot, `.plain` — the topic's own
///   SSE frames, byte for byte what the hub encoded once for every such subscriber
///   (its `id:` line is the topic's id).
/// - `?topic=…&topic=…`: up to 32 slots, `.tagged` — the shared JSON frames of
///   `TopicFrameEncoder`, each with its `FrameMark`, the `id:` line (the stream's
///   cursor) written in front by the consumer.
///
/// Everything that depends on the format is decided here, so the hub keeps one
/// table, one replay and one join for both.
public struct TopicSlots: Sendable, Hashable, ExpressibleByArrayLiteral {
    /// How a stream's frames are written.
    public enum Format: Sendable, Hashable {
        /// The topic's own SSE frames (one slot).
        case plain
        /// JSON frames naming their topic, each with a mark (any number of slots).
        case tagged
    }

    /// The topics, in parameter order; at least one, no duplicate.
    public let names: [String]
    public let format: Format

    /// A one-topic stream of the topic's own frames (`/events/<topic>`).
    public static func single(_ topic: String) -> TopicSlots {
        TopicSlots(names: [topic], format: .plain)
    }

    /// A stream of tagged frames (`?topic=…`).
    /// - Precondition: `topics` is not empty and has no duplicate.
    public static func tagged(_ topics: [String]) -> TopicSlots {
        TopicSlots(names: topics, format: .tagged)
    }

    /// `["a", "b"]`: a tagged stream of these topics.
    public init(arrayLiteral topics: String...) {
        self.init(names: topics, format: .tagged)
    }

    private init(names: [String], format: Format) {
        precondition(!names.isEmpty && Set(names).count == names.count, "one or more distinct topics")
        precondition(format == .tagged || names.count == 1, "a plain stream has one topic")
        self.names = names
        self.format = format
    }

    /// Whether frames carry marks (the consumer moves a cursor with them).
    var isMarked: Bool { format == .tagged }

    /// The queue a subscriber of these slots starts with, before its first frames
    /// (which come on top of the limit): on `.state` one value waits (per slot when
    /// tagged); on `.events` at most `limit` frames for all slots together.
    func queueMode(_ channel: Channel, limit: Int) -> SubscriberQueue.Mode {
        switch (channel, format) {
        case (.state, .plain): .latest
        case (.state, .tagged): .latestPerSlot
        case (.events, _): .bounded(limit: limit)
        }
    }

    /// The `gap` frame for the topic at `slot`, first missing id `first`.
    func gapFrame(slot: Int, firstMissingID first: UInt64) -> ([UInt8], FrameMark?) {
        switch format {
        case .plain: (SSEEncoder.gap(firstMissingID: first), nil)
        case .tagged: (TopicFrameEncoder.gap(topic: names[slot], firstMissingID: first), FrameMark(slot: slot, id: 0))
        }
    }

    /// A stored value (the topic's own `frame`, id `id`) for the topic at `slot`.
    func valueFrame(_ frame: [UInt8], id: UInt64, slot: Int) -> ([UInt8], FrameMark?) {
        switch format {
        case .plain:
            return (frame, nil)
        case .tagged:
            let fields = TopicFrameEncoder.fields(of: frame)
            return (TopicFrameEncoder.event(topic: names[slot], id: id, event: fields.event, data: fields.data),
                    FrameMark(slot: slot, id: id))
        }
    }
}
