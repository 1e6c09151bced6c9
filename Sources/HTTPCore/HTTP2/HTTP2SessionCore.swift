import CNghttp2

/// One connection's nghttp2 server session and what it knows of its streams.
/// nghttp2 owns framing, HPACK and flow control; this core feeds it the bytes
/// read (`receive`), collects what it serializes (`produce`), and turns its
/// callbacks into events for `HTTP2Connection` (requests to answer, streams
/// closed, abuse found).
///
/// Not thread-safe and not `Sendable`: its owner holds it in a lock and calls it
/// only under that lock; nghttp2's callbacks run inside those calls (same thread,
/// same lock) and only record, they never call out.
final class HTTP2SessionCore {
    /// What the connection does next, from the core's callbacks.
    enum Event {
        /// A whole request arrived on the stream.
        case request(Int32, HTTPRequest)
        /// A request refused before the handler (as HTTP/1.1 refuses it).
        case refuse(Int32, HTTPStatus, String)
    }

    private(set) var session: OpaquePointer?
    let limits: HTTPLimits
    let settings: HTTP2Settings
    let counters: HTTP2Counters?
    var streams: [Int32: HTTP2StreamState] = [:]
    /// Bytes serialized by nghttp2 and not yet handed to the socket.
    var out: [[UInt8]] = []
    var outBytes = 0
    var events: [Event] = []
    /// Streams whose source should be asked for more (their bytes ran out).
    var needsTake: Set<Int32> = []
    /// Batches fully framed since the last `produce`, to report once written.
    var framed: [(any StreamSource, StreamBatch)] = []
    /// Close handlers and sources of streams that closed, to run outside the lock.
    var closedWork: [@Sendable () -> Void] = []
    /// Set when the connection must end with a GOAWAY for this reason (sent raw if
    /// the session is broken, through nghttp2 otherwise).
    var abuse: HTTP2GoAwayReason?
    /// nghttp2 failed fatally: no more calls into the session.
    var broken = false
    /// The graceful GOAWAY (shutdown, idle) was submitted.
    var goingAway = false
    /// When the last open stream closed (or the session began): the idle timeout counts
    /// from here, or from the client's last bytes if later.
    var idleSince = ContinuousClock.now
    /// The connection is ending: the writer sends what is left and stops.
    var finishing = false
    /// The reader ended: the writer's linger stops waiting.
    var readerEnded = false
    var highestStreamID: Int32 = 0
    /// Compressed bytes of the header block being received (HEADERS + CONTINUATIONs).
    var headerBlockBytes = 0
    var resets: HTTP2AbuseBudget<ContinuousClock>
    var controlFrames: HTTP2AbuseBudget<ContinuousClock>

    /// Past this, `produce` stops asking nghttp2 for more until the socket took it.
    static let outLimit = 256 * 1024

    init(limits: HTTPLimits, settings: HTTP2Settings, counters: HTTP2Counters?) {
        self.limits = limits
        self.settings = settings
        self.counters = counters
        resets = HTTP2AbuseBudget(burst: settings.resetBurst, perSecond: settings.resetsPerSecond)
        controlFrames = HTTP2AbuseBudget(burst: settings.controlBurst, perSecond: settings.controlFramesPerSecond)
    }

    /// Creates the session and queues the server's SETTINGS. Call once, right after
    /// `init` (the session keeps a pointer to this object as its user data).
    func start() -> Bool {
        var option: OpaquePointer?
        guard nghttp2_option_new(&option) == 0 else { return false }
        defer { nghttp2_option_del(option) }
        nghttp2_option_set_max_continuations(option, settings.maxContinuations)
        guard let callbacks = HTTP2Callbacks.make() else { return false }
        defer { nghttp2_session_callbacks_del(callbacks) }
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_server_new2(&session, callbacks, user, option) == 0 else { return false }
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue),
                                   value: UInt32(settings.maxConcurrentStreams)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                                   value: UInt32(limits.maxHeaderBytes)),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
        ]
        return nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count) == 0
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    /// Deletes the session and closes every stream; returns what must run outside
    /// the lock (sources to cancel, close handlers).
    func end() -> [@Sendable () -> Void] {
        for stream in streams.values { close(stream) }
        streams.removeAll()
        if let session { nghttp2_session_del(session) }
        session = nil
        broken = true
        defer { closedWork.removeAll() }
        return closedWork
    }

    /// Feeds bytes read from the client. Abuse or a fatal error sets `abuse`/`broken`.
    func receive(_ bytes: [UInt8]) {
        guard let session, !broken else { return }
        let result = bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        guard result < 0 else { return }
        broken = true
        switch Int32(result) {
        case NGHTTP2_ERR_FLOODED.rawValue: abuse = abuse ?? .flood
        case NGHTTP2_ERR_TOO_MANY_CONTINUATIONS.rawValue: abuse = abuse ?? .continuationFlood
        case NGHTTP2_ERR_CALLBACK_FAILURE.rawValue: break  // a callback set `abuse`
        case NGHTTP2_ERR_BAD_CLIENT_MAGIC.rawValue: break  // not HTTP/2 after all: just close
        default: abuse = abuse ?? .protocolError
        }
    }

    /// Everything nghttp2 has to send now (up to `outLimit` bytes), and the
    /// batches framed in it; a raw GOAWAY last when abuse broke the session.
    func produce() -> [[UInt8]] {
        if let session, !broken {
            if nghttp2_session_send(session) != 0 { broken = true }
        }
        if broken, let reason = abuse {
            abuse = nil
            out.append(Self.goAwayFrame(lastStreamID: highestStreamID, code: reason.errorCode))
            counters?.countGoAway(reason)
        }
        defer {
            out.removeAll()
            outBytes = 0
        }
        return out
    }

    /// Whether the session has nothing more to read or write (GOAWAY exchanged and
    /// every stream closed, or broken).
    var isDone: Bool {
        guard let session, !broken else { return true }
        return nghttp2_session_want_read(session) == 0 && nghttp2_session_want_write(session) == 0
    }

    /// A graceful GOAWAY: no new streams; open ones run to their end.
    func goAway(_ reason: HTTP2GoAwayReason) {
        guard let session, !broken, !goingAway else { return }
        goingAway = true
        counters?.countGoAway(reason)
        nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
                              nghttp2_session_get_last_proc_stream_id(session), reason.errorCode, nil, 0)
    }

    /// Ends a stream with `RST_STREAM` (an overflowing subscriber, an aborted stream).
    func reset(_ id: Int32, code: UInt32) {
        guard let session, !broken, streams[id] != nil else { return }
        nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), id, code)
    }

    /// Marks a stream closed, queueing its source's cancel and its close handlers.
    func close(_ stream: HTTP2StreamState) {
        guard !stream.closed else { return }
        stream.closed = true
        closedWork += stream.onClose
        stream.onClose = []
        if let source = stream.source, !stream.bodyEnds {
            closedWork.append { source.cancel() }
        }
        stream.source = nil
        counters?.streams.subtract(1, ordering: .relaxed)
    }

    /// A GOAWAY frame built by hand, for a session nghttp2 gave up on.
    static func goAwayFrame(lastStreamID: Int32, code: UInt32) -> [UInt8] {
        let last = UInt32(bitPattern: lastStreamID) & 0x7fff_ffff
        return [0, 0, 8, 0x7, 0, 0, 0, 0, 0,
                UInt8(last >> 24), UInt8(last >> 16 & 0xff), UInt8(last >> 8 & 0xff), UInt8(last & 0xff),
                UInt8(code >> 24), UInt8(code >> 16 & 0xff), UInt8(code >> 8 & 0xff), UInt8(code & 0xff)]
    }
}
