import CNghttp2

/// The HTTP/2 side of `HTTPClient` (tests, the load tool): libnghttp2's client
/// session, fed the connection's bytes and drained of the bytes to write; no framing
/// of ours. It follows one response at a time, the last request's stream, and turns
/// it into the events the HTTP/1.1 parser gives (`head`, `body`, `end`), so a caller
/// cannot tell the two apart. A stream the server resets, or one a `GOAWAY` leaves
/// unprocessed, ends without `end` (as a cut HTTP/1.1 response ends without its
/// terminator). Not thread-safe: `HTTPClient` keeps it behind a lock, and the
/// callbacks run inside its calls into nghttp2 and only record.
final class HTTP2ClientSession {
    private var session: OpaquePointer?
    /// Request bodies not yet handed to nghttp2, by stream.
    fileprivate var bodies: [Int32: ArraySlice<UInt8>] = [:]
    /// The stream whose response `next` reports (the last request's).
    private var current: Int32 = -1
    fileprivate var events: [HTTPResponseParser.Event] = []
    /// The head being received on `current`.
    fileprivate var status = 0
    fileprivate var fields = HTTPHeaders()
    /// `current` closed (ended, reset or refused): nothing more comes for it.
    fileprivate var currentClosed = false
    /// The server sent `GOAWAY`, or the session failed: no new stream can start.
    fileprivate(set) var goneAway = false

    init() throws(HTTPResponseParser.Failure) {
        var callbacks: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0 else { throw .init(reason: "nghttp2: no memory") }
        defer { nghttp2_session_callbacks_del(callbacks) }
        Self.install(callbacks)
        let user = Unmanaged.passUnretained(self).toOpaque()
        guard nghttp2_session_client_new(&session, callbacks, user) == 0 else {
            throw .init(reason: "nghttp2: no client session")
        }
        var entries = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS.rawValue), value: 100),
        ]
        nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &entries, entries.count)
    }

    deinit {
        if let session { nghttp2_session_del(session) }
    }

    /// Starts a request on a new stream, which `next` follows from now on. HTTP/1.1's
    /// `Host` becomes `:authority`; names are sent in lower case, as HTTP/2 requires.
    func request(method: String, target: String, scheme: String, headers: [(String, String)],
                 body: [UInt8]?) throws(HTTPResponseParser.Failure) {
        guard !goneAway else { throw .init(reason: "the server sent GOAWAY: no new stream") }
        var authority = headers.first { $0.0.lowercased() == "host" }?.1 ?? "127.0.0.1"
        var scheme = scheme
        var path = target
        // An absolute-form target (`http://x/p`) is HTTP/1.1's; HTTP/2 says it in its pseudo-fields.
        if let colon = target.range(of: "://"), !target.hasPrefix("/") {
            scheme = String(target[..<colon.lowerBound])
            let rest = target[colon.upperBound...]
            let slash = rest.firstIndex(of: "/") ?? rest.endIndex
            authority = String(rest[..<slash])
            path = slash == rest.endIndex ? "/" : String(rest[slash...])
        }
        var pairs = [(":method", method), (":scheme", scheme), (":authority", authority), (":path", path)]
        // Values without the optional whitespace around them, as an HTTP/1.1 server reads them
        // (HTTP/2 forbids it: nghttp2 would reset the stream).
        pairs += headers.filter { $0.0.lowercased() != "host" }.map { name, value in
            (name.lowercased(), String(value.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()))
        }
        if let body, !pairs.contains(where: { $0.0 == "content-length" }) { pairs.append(("content-length", "\(body.count)")) }
        // One buffer of every name and value; the name/value list points into it (nghttp2 copies them).
        var text: [UInt8] = []
        var spans: [(Int, Int, Int, Int)] = []
        for (name, value) in pairs {
            let nameStart = text.count
            text += name.utf8
            let valueStart = text.count
            text += value.utf8
            spans.append((nameStart, valueStart - nameStart, valueStart, text.count - valueStart))
        }
        text.append(0)  // never empty, so the base address exists
        let id = text.withUnsafeBufferPointer { buffer -> Int32 in
            let base = buffer.baseAddress!
            var list = spans.map { cnghttp2_nv(base + $0.0, $0.1, base + $0.2, $0.3) }
            guard body != nil else { return nghttp2_submit_request(session, nil, &list, list.count, nil, nil) }
            var provider = nghttp2_data_provider(source: nghttp2_data_source(ptr: nil), read_callback: Self.readBody)
            return nghttp2_submit_request(session, nil, &list, list.count, &provider, nil)
        }
        guard id > 0 else { throw .init(reason: "nghttp2_submit_request: \(id)") }
        if let body { bodies[id] = body[...] }
        current = id
        events = []
        status = 0
        fields = HTTPHeaders()
        currentClosed = false
    }

    /// Feeds bytes read from the connection.
    func receive(_ bytes: [UInt8]) throws(HTTPResponseParser.Failure) {
        let result = bytes.withUnsafeBufferPointer { nghttp2_session_mem_recv(session, $0.baseAddress, $0.count) }
        if result < 0 {
            goneAway = true
            currentClosed = true
            throw .init(reason: "HTTP/2: \(String(cString: nghttp2_strerror(Int32(result))))")
        }
    }

    /// What nghttp2 has to write now (the preface, frames, acknowledgements, window updates).
    func output() -> [UInt8] {
        var out: [UInt8] = []
        while true {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            guard count > 0, let data else { break }
            out.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        }
        return out
    }

    /// The next event of the followed response; nil when none is ready.
    func next() -> HTTPResponseParser.Event? {
        events.isEmpty ? nil : events.removeFirst()
    }

    /// Nothing more will come for the followed response (its stream closed, or the session is over).
    var isOver: Bool {
        events.isEmpty && (currentClosed || nghttp2_session_want_read(session) == 0)
    }

    fileprivate func follows(_ id: Int32) -> Bool { id == current }

    private static func session(_ user: UnsafeMutableRawPointer?) -> HTTP2ClientSession {
        Unmanaged<HTTP2ClientSession>.fromOpaque(user!).takeUnretainedValue()
    }

    /// A request body's data provider: copies what is left, then ends the stream.
    private static let readBody: nghttp2_data_source_read_callback = { _, id, buffer, length, flags, _, user in
        let client = HTTP2ClientSession.session(user)
        let rest = client.bodies[id] ?? []
        let count = min(length, rest.count)
        if count > 0, let buffer {
            rest.prefix(count).withUnsafeBufferPointer { buffer.update(from: $0.baseAddress!, count: count) }
        }
        let left = rest.dropFirst(count)
        if left.isEmpty {
            client.bodies[id] = nil
            flags?.pointee |= cnghttp2_DATA_FLAG_EOF
        } else {
            client.bodies[id] = left
        }
        return count
    }

    private static func install(_ callbacks: OpaquePointer?) {
        nghttp2_session_callbacks_set_on_header_callback(callbacks) { _, frame, name, nameLength, value, valueLength, _, user in
            guard let frame, UInt32(frame.pointee.hd.type) == NGHTTP2_HEADERS.rawValue else { return 0 }
            let client = HTTP2ClientSession.session(user)
            guard client.follows(frame.pointee.hd.stream_id) else { return 0 }
            let name = String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self)
            let value = String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
            if name == ":status" { client.status = Int(value) ?? 0 } else { client.fields.add(name: name, value: value) }
            return 0
        }
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks) { _, _, id, data, length, user in
            let client = HTTP2ClientSession.session(user)
            if client.follows(id), let data { client.events.append(.body(Array(UnsafeBufferPointer(start: data, count: length)))) }
            return 0
        }
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks) { _, frame, user in
            guard let frame else { return 0 }
            let client = HTTP2ClientSession.session(user)
            let type = UInt32(frame.pointee.hd.type)
            if type == NGHTTP2_GOAWAY.rawValue { client.goneAway = true }
            guard client.follows(frame.pointee.hd.stream_id) else { return 0 }
            if type == NGHTTP2_HEADERS.rawValue, client.status != 0 {
                // A response head (interim or final); a trailer block has no status and is dropped.
                client.events.append(.head(HTTPResponseParser.Head(status: client.status, reason: "", headers: client.fields)))
                client.status = 0
                client.fields = HTTPHeaders()
            }
            if type == NGHTTP2_HEADERS.rawValue || type == NGHTTP2_DATA.rawValue,
               frame.pointee.hd.flags & cnghttp2_FLAG_END_STREAM != 0 {
                client.events.append(.end)
            }
            return 0
        }
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks) { _, id, _, user in
            let client = HTTP2ClientSession.session(user)
            client.bodies[id] = nil
            if client.follows(id) { client.currentClosed = true }
            return 0
        }
    }
}
