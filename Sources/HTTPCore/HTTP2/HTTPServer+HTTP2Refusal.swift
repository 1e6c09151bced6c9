import CNghttp2

/// The over-cap refusal (`--max-connections`, `--max-connections-per-ip`) to a client
/// that speaks HTTP/2, in HTTP/2: an HTTP/1.1 text `503` would be a protocol error to
/// it. As nginx answers `limit_conn` over HTTP/2: the server's SETTINGS, the same `503`
/// (one-line reason, `Retry-After`, CORS) on the client's first stream, then `GOAWAY`
/// (`NO_ERROR`, that stream as the last, the reason as debug data) and the close. A
/// client that opens no stream within a second gets the `GOAWAY` alone.
extension HTTPServer {
    /// The bytes an over-cap connection opened HTTP/2 with (empty over TLS, where ALPN
    /// chose `h2`); nil when it speaks HTTP/1.1 (or said nothing within a second), so
    /// the text `503` is right for it. Reads at most a preface's worth in cleartext.
    func http2Opening(of connection: Connection) async -> [UInt8]? {
        guard configuration.http2.enabled else { return nil }
        if connection.isTLS { return connection.tlsALPNProtocol == "h2" ? [] : nil }
        let deadline = ContinuousClock.now + .seconds(1)
        var preface = HTTP2PrefaceCheck.pending
        while true {
            guard let bytes = try? await connection.read(maxBytes: 4096, deadline: deadline), !bytes.isEmpty else {
                return nil
            }
            switch preface.check(bytes) {
            case .http2: if case .http2(let initial) = preface { return initial } else { return nil }
            case .http1: return nil
            case .undecided: continue
            }
        }
    }

    /// Answers the refusal over HTTP/2 (see the type's comment); the caller closes.
    func refuseHTTP2(_ connection: Connection, initial: [UInt8], reason: String) async {
        let core = HTTP2SessionCore(limits: configuration.limits, settings: configuration.http2, counters: nil)
        defer { _ = core.end() }
        guard core.start() else { return }
        core.receive(initial)
        let deadline = ContinuousClock.now + .seconds(1)
        while !core.broken {
            if let first = core.events.first {
                let id: Int32
                var isHEAD = false
                switch first {
                case .request(let stream, let request):
                    id = stream
                    isHEAD = request.head.method == "HEAD"
                case .refuse(let stream, _, _):
                    id = stream
                }
                var response = configuration.refusal(.serviceUnavailable, reason)
                response.head.headers.replaceOrAdd(name: "Retry-After", value: "\(configuration.retryAfterSeconds)")
                let (status, fields, body) = HTTP2ResponseHead.make(response, isHEAD: isHEAD)
                _ = core.respond(id, status: status, fields: fields, body: body)
                break
            }
            try? await connection.write(core.produce(), deadline: deadline)
            guard let bytes = try? await connection.read(maxBytes: 16 * 1024, deadline: deadline), !bytes.isEmpty else {
                break
            }
            core.receive(bytes)
        }
        if let session = core.session, !core.broken {
            let debug = Array(reason.utf8)
            nghttp2_submit_goaway(session, UInt8(NGHTTP2_FLAG_NONE.rawValue),
                                  nghttp2_session_get_last_proc_stream_id(session), 0 /* NO_ERROR */, debug, debug.count)
        }
        try? await connection.write(core.produce(), deadline: .now + .seconds(1))
        // Closing with unread bytes (the client's SETTINGS acknowledgement, say) would
        // reset the connection and could destroy the answer before the client read it:
        // read and discard until the client closes, at most a second and 64 KiB.
        let linger = ContinuousClock.now + .seconds(1)
        var discarded = 0
        while discarded < 64 * 1024,
              let bytes = try? await connection.read(maxBytes: 16 * 1024, deadline: linger), !bytes.isEmpty {
            discarded += bytes.count
        }
    }
}
