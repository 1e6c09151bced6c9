import GatewayAPI
import HTTPCore
import StreamHub

/// `GET /state/<topic>` and `GET /events/<topic>` (and several topics in one
/// stream, `?topic=…`): registers a subscriber in the engine *before* the response head goes out (so the subscription is live
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

    /// `GET /state/<topic>`, `/events/<topic>` (one `.plain` slot) and
    /// `GET /state?topic=…&topic=…`, `/events?topic=…` (`.tagged` slots): one
    /// subscriber of every topic, registered before the head goes out. A resume
    /// position comes from `Last-Event-ID` on `/events`: a topic id for one plain
    /// slot, the stream's cursor (one position per topic) for tagged ones. A token
    /// must grant every one of the topics.
    func respond(to request: HTTPRequest, channel: Channel, slots: TopicSlots) async -> Reply {
        let grant: AccessControl.Grant
        switch access.subscribe(request.head, topics: slots.names) {
        case .success(let granted): grant = granted
        case .failure(let refusal): return .refusal(refusal)
        }
        if request.head.method == "HEAD" {
            // The headers of the stream, without subscribing; the server sends a
            // stream's head only to HEAD.
            return .response(HTTPResponse(head: HTTPResponseHead(status: .ok, headers: headers), body: .source(.empty)))
        }
        let subscription: Subscription
        do {
            subscription = try await engine.subscribe(topics: slots, channel: channel,
                                                      resumeAfter: resumePositions(request, channel: channel, slots: slots))
        } catch {
            // Nothing is subscribed; EventSource retries by itself after an error status.
            return .refused(.serviceUnavailable, "cannot subscribe now: \(engine.notReadyReason ?? "the cluster's Redis did not answer in time")",
                            headers: ["Retry-After": "1"])
        }
        return streaming(SubscriptionSource(subscription, delivery: recorder), finishing: subscription,
                         until: grant.acceptedUntil)
    }

    /// Where an `/events` stream resumes in each slot, from `Last-Event-ID`.
    private func resumePositions(_ request: HTTPRequest, channel: Channel, slots: TopicSlots) -> [UInt64?]? {
        guard channel == .events else { return nil }
        let header = request.head.headers["Last-Event-ID"]
        switch slots.format {
        case .plain: return [LastEventID.parse(header)]
        case .tagged: return StreamCursor.parse(header, topicCount: slots.names.count)?.positions.map { $0 }
        }
    }

    /// The stream of a subscription, written by the event loop from `source`:
    /// `retry:` and the first frames in one write, then every batch the loop takes.
    /// A client that vanishes cancels the subscription; an overflow aborts the
    /// connection (the writer may be stuck in a write to a client that does not
    /// read). The stream ends when the token stops being accepted, if it had one.
    private func streaming(_ subscriberSource: some StreamSource, finishing subscription: Subscription,
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
