import GatewayAPI
import HTTPCore
import StreamHub

/// `GET /state/<topic>` and `GET /events/<topic>` (and several topics in one
/// stream, `respond(…topics:)`): registers a subscriber in
/// the hub *before* the response head goes out (so the subscription is live
/// from the moment the client sees the headers), then streams its frames.
///
/// The stream's lifetime is the connection's task, its frames are written by
/// the event loop (`SourcedBody`): at the end of each loop turn, everything the
/// subscriber gathered goes out in one `writev`, without waking the task; when
/// the client vanishes the subscription is cancelled and the subscriber leaves
/// the hub; when the hub finishes the subscriber (overflow, shutdown) the
/// response ends and the connection closes. A token is checked before anything is subscribed
/// (`AccessControl`), and a stream opened with one ends when the token stops
/// being accepted (`TokenExpiry`).
struct SubscribeHandler: Sendable {
    let engine: any StreamEngine
    let access: AccessControl
    let retryFrame: [UInt8]
    let headers: HTTPHeaders
    /// Where each completed write to a subscriber is recorded (latency, frames per write).
    let delivery: DeliveryMetrics
    /// Hands the sources' completed writes to `delivery`.
    let recorder: DeliveryRecorder
    /// Every open stream, for ending them with a spread `retry:` on a stop.
    let drain: StreamDrain

    init(engine: any StreamEngine, access: AccessControl, retryMilliseconds: Int, delivery: DeliveryMetrics,
         drain: StreamDrain) {
        self.engine = engine
        self.drain = drain
        self.access = access
        self.delivery = delivery
        recorder = DeliveryRecorder(metrics: delivery)
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
        return streaming(SubscriptionSource(subscription, delivery: recorder), finishing: subscription,
                         until: grant.acceptedUntil)
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
        return streaming(TopicsSource(subscription, delivery: recorder), finishing: subscription,
                         until: grant.acceptedUntil)
    }

    /// The stream of a subscription, written by the event loop from `source`:
    /// `retry:` and the first frames in one write, then every batch the loop takes.
    /// A client that vanishes cancels the subscription; an overflow aborts the
    /// connection (the writer may be stuck in a write to a client that does not
    /// read). The stream ends when the token stops being accepted, if it had one.
    private func streaming(_ subscriberSource: some StreamSource, finishing subscription: some SubscriberStream,
                           until acceptedUntil: Double?) -> Reply {
        // A drain on a stop ends it with a spread `retry:` (see `DrainSchedule`).
        let source = DrainableSource(subscriberSource, registry: drain)
        source.register()
        let body = SourcedBody(prelude: retryFrame, source: source,
                               endsAt: TokenExpiry.deadline(acceptedUntil: acceptedUntil)) { stream in
            subscription.onFinish { reason in
                if reason == .overflow { stream.abort() }
            }
        }
        return .response(HTTPResponse(head: HTTPResponseHead(status: .ok, headers: headers), body: .source(body)))
    }
}

/// What the stream needs of a subscription, one topic or several.
protocol SubscriberStream: Sendable {
    func onFinish(_ handler: @escaping @Sendable (FinishReason) -> Void)
}

extension Subscription: SubscriberStream {}
extension TopicsSubscription: SubscriberStream {}
