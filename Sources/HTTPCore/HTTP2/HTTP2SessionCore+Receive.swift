import CNghttp2

/// The core's side of receiving: frames counted against the abuse budgets, request
/// headers and bodies gathered within `HTTPLimits`, a whole request turned into
/// the `HTTPRequest` the handler gets (the same type HTTP/1.1 builds).
extension HTTP2SessionCore {
    func beganFrame(_ header: nghttp2_frame_hd) -> Int32 {
        let type = UInt32(header.type)
        let isAck = header.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0
        switch type {
        case NGHTTP2_HEADERS.rawValue:
            headerBlockBytes = header.length
        case NGHTTP2_CONTINUATION.rawValue:
            headerBlockBytes += header.length
        case NGHTTP2_RST_STREAM.rawValue:
            if !resets.spend(at: .now) { return refuse(.rapidReset) }
        case NGHTTP2_PING.rawValue where !isAck:
            if !controlFrames.spend(at: .now) { return refuse(.pingFlood) }
        case NGHTTP2_SETTINGS.rawValue where !isAck:
            if !controlFrames.spend(at: .now) { return refuse(.settingsFlood) }
        default:
            break
        }
        return 0
    }

    func beganRequest(_ id: Int32) -> Int32 {
        if streams.count >= settings.maxConcurrentStreams { return refuse(.tooManyStreams) }
        streams[id] = HTTP2StreamState(id: id)
        highestStreamID = max(highestStreamID, id)
        counters?.streams.add(1, ordering: .relaxed)
        return 0
    }

    func received(header name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>, on id: Int32) -> Int32 {
        guard let stream = streams[id] else { return 0 }
        stream.headerBytes += name.count + value.count + 32
        if stream.headerBytes > limits.maxHeaderBytes {
            // Far more decoded than received: references to the dynamic table repeated.
            return refuse(stream.headerBytes > 8 * max(headerBlockBytes, 1) ? .hpackBomb : .headerListTooLarge)
        }
        guard !stream.dispatched else { return 0 }  // trailers
        let text = String(decoding: value, as: UTF8.self)
        if name.first == UInt8(ascii: ":") {
            switch String(decoding: name, as: UTF8.self) {
            case ":method": stream.method = text
            case ":path": stream.path = text
            case ":authority": stream.authority = text
            default: break
            }
        } else {
            stream.headers.add(name: String(decoding: name, as: UTF8.self), value: text)
        }
        return 0
    }

    func received(body: UnsafeBufferPointer<UInt8>, on id: Int32) {
        guard let stream = streams[id], !stream.dispatched else { return }
        stream.lastProgress = .now
        guard stream.body.count + body.count <= limits.maxBodyBytes else {
            stream.dispatched = true
            events.append(.refuse(id, .contentTooLarge,
                                  "body of \(stream.body.count + body.count) bytes exceeds \(limits.maxBodyBytes) bytes"))
            stream.body = []
            return
        }
        stream.body.append(contentsOf: body)
    }

    /// When the connection's idle timeout ends, while no stream is open and no GOAWAY is
    /// on its way: `timeout` after the last stream closed or the client's last bytes
    /// (`lastReceived`), whichever is later; nil while it is not idle.
    func idleEnd(after lastReceived: ContinuousClock.Instant, timeout: Duration) -> ContinuousClock.Instant? {
        guard streams.isEmpty && !goingAway else { return nil }
        return max(idleSince, lastReceived) + timeout
    }

    /// When the next request still arriving runs out of time (`timeout` after its last
    /// progress); nil when none is arriving.
    func stalledRequestDeadline(_ timeout: Duration) -> ContinuousClock.Instant? {
        streams.values.lazy.filter { !$0.dispatched }.map { $0.lastProgress + timeout }.min()
    }

    func headersEnded(_ id: Int32) {
        streams[id]?.headersDone = true
    }

    /// Refuses (`408`, as HTTP/1.1 does) every request that made no progress for `timeout`.
    /// A header block left unfinished ends the connection instead (nothing else may be
    /// sent on it meanwhile): a GOAWAY as for an idle connection.
    func refuseStalledRequests(_ timeout: Duration, now: ContinuousClock.Instant) {
        for stream in streams.values where !stream.dispatched && stream.lastProgress + timeout <= now {
            guard stream.headersDone else {
                broken = true
                if abuse == nil { abuse = .idleTimeout }
                return
            }
            stream.dispatched = true
            stream.body = []
            events.append(.refuse(stream.id, .requestTimeout, "request not received in time"))
        }
    }

    /// The client ended its side of the stream: the request is whole.
    func requestEnded(_ id: Int32) {
        guard let stream = streams[id], !stream.dispatched else { return }
        stream.dispatched = true
        guard let method = stream.method, let target = stream.path else {
            return events.append(.refuse(id, .badRequest, "missing :method or :path"))
        }
        guard target.utf8.count <= limits.maxURIBytes else {
            return events.append(.refuse(id, .uriTooLong, "request target exceeds \(limits.maxURIBytes) bytes"))
        }
        guard target.hasPrefix("/") || (target == "*" && method == "OPTIONS") else {
            return events.append(.refuse(id, .badRequest, "invalid request target"))
        }
        let rawPath: String
        let query: String?
        if let mark = target.firstIndex(of: "?") {
            rawPath = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        } else {
            rawPath = target
            query = nil
        }
        var headers = stream.headers
        if let authority = stream.authority, !headers.contains("Host") { headers.add(name: "host", value: authority) }
        // END_STREAM delimits every body; an empty one is still a body when the client
        // announced it (`content-length: 0`: a publish of an empty value, as over HTTP/1.1).
        let framing: HTTPBodyFraming = stream.body.isEmpty && !headers.contains("content-length")
            ? .none : .contentLength(stream.body.count)
        let head = HTTPRequestHead(method: method, target: target, rawPath: rawPath, query: query, version: .http11,
                                   headers: headers, bodyFraming: framing,
                                   keepAlive: true, expectsContinue: false)
        events.append(.request(id, HTTPRequest(head: head, body: stream.body)))
        stream.body = []
        stream.headers = HTTPHeaders()
    }

    func sent(_ frame: nghttp2_frame) -> Int32 {
        switch UInt32(frame.hd.type) {
        case NGHTTP2_RST_STREAM.rawValue:
            // nghttp2 refuses a stream past the acknowledged SETTINGS_MAX_CONCURRENT_STREAMS.
            if frame.rst_stream.error_code == NGHTTP2_REFUSED_STREAM.rawValue && !goingAway {
                return refuse(.tooManyStreams)
            }
        case NGHTTP2_GOAWAY.rawValue:
            // Ours are counted when submitted; one nghttp2 sends is for a protocol error.
            if frame.goaway.error_code != 0 && !broken { counters?.countGoAway(.protocolError) }
        default:
            break
        }
        return 0
    }

    /// Records abuse; the failing callback makes nghttp2 stop and the session ends
    /// with a GOAWAY for `reason`.
    private func refuse(_ reason: HTTP2GoAwayReason) -> Int32 {
        if abuse == nil { abuse = reason }
        return HTTP2Callbacks.failure
    }
}
