import GatewayAPI
import HTTPCore
import StreamHub

/// `GET /state/<topic>` and `GET /events/<topic>` (and several topics in one
/// stream, `respond(…topics:)`): registers a subscriber in
/// the hub *before* the response head goes out (so the subscription is live
/// from the moment the client sees the headers), then streams its frames.
///
/// The stream's lifetime is the connection's task: frames are written as
/// batches (everything queued while the previous write was in progress goes
/// out in one `writev`); when the client vanishes the subscription is
/// cancelled, the loop ends and the subscriber leaves the hub; when the hub
/// finishes the subscriber (overflow, shutdown) the response ends and the
/// connection closes. A token is checked before anything is subscribed
/// (`AccessControl`), and a stream opened with one ends when the token stops
/// being accepted (`TokenExpiry`).
struct SubscribeHandler: Sendable {
    let engine: any StreamEngine
    let access: AccessControl
    let retryFrame: [UInt8]
    let headers: HTTPHeaders
    /// Where each completed write to a subscriber is recorded (latency, frames per write).
    let delivery: DeliveryMetrics

    init(engine: any StreamEngine, access: AccessControl, retryMilliseconds: Int, delivery: DeliveryMetrics) {
        self.engine = engine
        self.access = access
        self.delivery = delivery
        retryFrame = SSEEncoder.retry(milliseconds: retryMilliseconds)
        headers = [
            "Content-Type": "text/event-stream",
            "Cache-Control": "no-cache",
            "X-Accel-Buffering": "no",
        ]
    }

    func respond(to request: HTTPRequest, channel: Channel, topic: String) async -> Reply {
        let grant: AccessControl.Grant
        switch access.subscribe(request.head, topics: [topic]) {
        case .success(let granted): grant = granted
        case .failure(let refusal): return .refusal(refusal)
        }
        if request.head.method == "HEAD" {
            // The headers of the stream, without subscribing: the server sends
            // only the head of a streaming answer to HEAD.
            return .response(HTTPResponse(head: HTTPResponseHead(status: .ok, headers: headers), body: .stream { _ in }))
        }
        let lastEventID = channel == .events ? LastEventID.parse(request.head.headers["Last-Event-ID"]) : nil
        let subscription: Subscription
        do {
            subscription = try await engine.subscribe(topic: topic, channel: channel, lastEventID: lastEventID)
        } catch {
            // Nothing is subscribed; EventSource retries by itself after an error status.
            return .refused(.serviceUnavailable, "cannot subscribe now: the cluster's Redis is unreachable",
                            headers: ["Retry-After": "1"])
        }
        return streaming(subscription, until: grant.acceptedUntil, state: ()) { subscription, _ in
            await subscription.nextBatch()
        }
    }

    /// `GET /state?topic=…&topic=…` and `/events?topic=…`: one subscriber of every
    /// topic, registered before the head goes out, as for one topic. On `/events` the
    /// stream's cursor is this connection's: it starts where the engine says and moves
    /// as frames are written, each value going out as its shared JSON frame with an
    /// `id: <cursor>` line assembled here in front of it (gaps and heartbeats get none).
    /// A token must grant every one of the topics.
    func respond(to request: HTTPRequest, channel: Channel, topics: [String]) async -> Reply {
        let grant: AccessControl.Grant
        switch access.subscribe(request.head, topics: topics) {
        case .success(let granted): grant = granted
        case .failure(let refusal): return .refusal(refusal)
        }
        if request.head.method == "HEAD" {
            return .response(HTTPResponse(head: HTTPResponseHead(status: .ok, headers: headers), body: .stream { _ in }))
        }
        let resumeAfter: [UInt64?]? = channel == .events
            ? StreamCursor.parse(request.head.headers["Last-Event-ID"], topicCount: topics.count)?.positions.map { $0 }
            : nil
        let subscription: TopicsSubscription
        do {
            subscription = try await engine.subscribe(topics: topics, channel: channel, resumeAfter: resumeAfter)
        } catch {
            return .refused(.serviceUnavailable, "cannot subscribe now: the cluster's Redis is unreachable",
                            headers: ["Retry-After": "1"])
        }
        let writesCursor = channel == .events
        let start = StreamCursor(positions: subscription.startPositions)
        return streaming(subscription, until: grant.acceptedUntil, state: start) { subscription, cursor in
            guard let batch = await subscription.nextBatch() else { return nil }
            guard writesCursor else { return batch.frames }
            var chunks: [[UInt8]] = []
            chunks.reserveCapacity(batch.frames.count * 2)
            for (frame, mark) in zip(batch.frames, batch.marks) {
                if mark.id > 0 {
                    cursor.positions[mark.slot] = mark.id
                    chunks.append(cursor.idLine)
                }
                chunks.append(frame)
            }
            return chunks
        }
    }

    /// The stream of a subscription: `retry:`, then every batch `next` gives (one
    /// `writev` each) until it gives nil. A client that vanishes cancels the
    /// subscription; an overflow aborts the connection (the writer may be stuck).
    /// `state` is the stream task's own (the cursor), handed to every `next`. The
    /// stream ends when the token stops being accepted (`acceptedUntil`), if it had one.
    private func streaming<Source: SubscriberStream, State: Sendable>(
        _ subscription: Source, until acceptedUntil: Double?, state: State,
        next: @escaping @Sendable (Source, inout State) async -> [[UInt8]]?
    ) -> Reply {
        let retryFrame = retryFrame
        return .response(HTTPResponse(head: HTTPResponseHead(status: .ok, headers: headers), body: .stream { stream in
            var state = state
            subscription.onFinish { reason in
                // A subscriber that fell behind may be stuck in a write to a
                // client that does not read: end the connection now.
                if reason == .overflow { stream.abort() }
            }
            stream.onPeerClosed { subscription.cancel() }
            defer { subscription.cancel() }
            await TokenExpiry.endStream(of: subscription, at: acceptedUntil) {
                do {
                    try await stream.write([retryFrame])
                    while true {
                        // Behind the jobs already queued on the loop (publishes among
                        // them), so that a busy topic's frames go out several to a
                        // write, instead of one write per frame per subscriber.
                        await stream.afterQueuedWork()
                        guard let batch = await next(subscription, &state) else { break }
                        try await stream.write(batch)
                    }
                } catch {
                    // The client went away mid-write; the subscription is cancelled above.
                }
            }
        }))
    }
}

/// What the stream loop needs of a subscription, one topic or several.
protocol SubscriberStream: Sendable {
    func onFinish(_ handler: @escaping @Sendable (FinishReason) -> Void)
    func cancel()
}

extension Subscription: SubscriberStream {}
extension TopicsSubscription: SubscriberStream {}
