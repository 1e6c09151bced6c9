import GatewayAPI
import HTTPCore
import StreamHub

/// `GET /state/<topic>` and `GET /events/<topic>`: registers a subscriber in
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

    init(engine: any StreamEngine, access: AccessControl, retryMilliseconds: Int) {
        self.engine = engine
        self.access = access
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
        let retryFrame = retryFrame
        return .response(HTTPResponse(head: HTTPResponseHead(status: .ok, headers: headers), body: .stream { stream in
            subscription.onFinish { reason in
                // A subscriber that fell behind may be stuck in a write to a
                // client that does not read: end the connection now.
                if reason == .overflow { stream.abort() }
            }
            stream.onPeerClosed { subscription.cancel() }
            defer { subscription.cancel() }
            await TokenExpiry.endStream(of: subscription, at: grant.acceptedUntil) {
                do {
                    try await stream.write([retryFrame])
                    while true {
                        // Behind the jobs already queued on the loop (publishes among
                        // them), so that a busy topic's frames go out several to a
                        // write, instead of one write per frame per subscriber.
                        await stream.afterQueuedWork()
                        guard let batch = await subscription.nextBatch() else { break }
                        try await stream.write(batch)
                    }
                } catch {
                    // The client went away mid-write; the subscription is cancelled above.
                }
            }
        }))
    }
}
