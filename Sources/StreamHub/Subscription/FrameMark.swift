/// What a frame of a tagged stream (`?topic=`) is, beside its bytes: which of the stream's
/// topics (`slot`, the index in its `topic` parameters) and which id of that topic
/// it delivers. The consumer moves its cursor with it when it writes the frame.
///
/// `id` 0 moves nothing: a `gap` (it names a lost id, it delivers none) or a
/// heartbeat (`slot` -1, no topic).
public struct FrameMark: Sendable, Equatable {
    public let slot: Int
    public let id: UInt64

    public init(slot: Int, id: UInt64) {
        self.slot = slot
        self.id = id
    }

    /// A frame that belongs to no topic (a heartbeat).
    public static let none = FrameMark(slot: -1, id: 0)
}
