import GatewayAPI
import HTTPCore
import Locking
import StreamHub

/// A subscription as the source of a pumped SSE stream: the event loop takes its
/// pending frames at the end of a turn (`Subscription.poll`), so a publish wakes no
/// task per subscriber. The stream ending from the connection's side cancels the
/// subscription (it leaves the engine's tables).
///
/// On a tagged `/events` stream the cursor lives here: it starts where the engine
/// says and moves as frames are taken, each value going out as its shared JSON frame
/// with an `id: <cursor>` line assembled in front of it (gaps and heartbeats get
/// none). Plain streams and `/state` write their frames as they are.
final class SubscriptionSource: StreamSource {
    private let subscription: Subscription
    private let delivery: DeliveryRecorder
    /// True on a tagged `/events` stream, the one that writes its cursor here.
    private let writesCursor: Bool
    /// Only the pump's single consumer touches it; the lock, uncontended, makes
    /// that visible to the compiler.
    private let cursor: Locked<StreamCursor>

    init(_ subscription: Subscription, delivery: DeliveryRecorder) {
        self.subscription = subscription
        self.delivery = delivery
        writesCursor = subscription.channel == .events && subscription.slots.format == .tagged
        cursor = Locked(StreamCursor(positions: subscription.startPositions))
    }

    func take(orNotify ready: @escaping @Sendable () -> Void) -> StreamTake {
        StreamTake(subscription.poll(orNotify: ready)) { frames, marks in
            guard writesCursor else { return frames }
            return cursor.withLock { cursor in
                var chunks: [[UInt8]] = []
                chunks.reserveCapacity(frames.count * 2)
                for (frame, mark) in zip(frames, marks) {
                    if mark.id > 0 {
                        cursor.positions[mark.slot] = mark.id
                        chunks.append(cursor.idLine)
                    }
                    chunks.append(frame)
                }
                return chunks
            }
        }
    }

    func written(_ batch: StreamBatch, at time: ContinuousClock.Instant) {
        delivery.written(batch, on: subscription.channel, at: time)
    }

    func cancel() {
        subscription.cancel()
    }
}

extension StreamTake {
    /// A subscription's poll as a stream take: its frames become the batch's chunks
    /// through `chunks` (the frames and their marks), counted as the poll says.
    init(_ poll: SubscriberPoll, chunks: ([[UInt8]], [FrameMark]) -> [[UInt8]]) {
        switch poll {
        case .frames(let frames, let marks, let values, let oldest):
            self = .batch(StreamBatch(chunks: chunks(frames, marks), frames: frames.count, values: values,
                                      oldestValueAt: oldest?.instant))
        case .pending:
            self = .pending
        case .finished:
            self = .finished
        }
    }
}

/// What a source tells the metrics once a batch reached the socket: one write to
/// `DeliveryMetrics`, its values having waited since the oldest was queued.
struct DeliveryRecorder: Sendable {
    let metrics: DeliveryMetrics

    func written(_ batch: StreamBatch, on channel: Channel, at time: ContinuousClock.Instant) {
        metrics.recordWrite(channel: channel, frames: batch.frames, events: batch.values,
                            oldestWaited: batch.oldestValueAt.map { time - $0 })
    }
}
