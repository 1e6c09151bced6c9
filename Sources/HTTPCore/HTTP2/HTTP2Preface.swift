/// The client connection preface that opens every HTTP/2 connection (RFC 9113 §3.4).
/// In cleartext, a connection whose first bytes are it (or its start) speaks HTTP/2
/// with prior knowledge; no HTTP/1.1 request can begin so (`PRI` is no method we serve).
enum HTTP2Preface {
    static let bytes = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// Whether a connection's first read starts the preface (at least `PRI `).
    static func begins(_ first: [UInt8]) -> Bool {
        let count = min(first.count, bytes.count)
        guard count >= 4 else { return false }
        return first.prefix(count).elementsEqual(bytes.prefix(count))
    }
}

/// Whether a cleartext connection turned out to speak HTTP/2: decided by its first
/// bytes, however the client's writes split them (a first read of 1 to 3 bytes that
/// begin the preface waits for more; anything else is HTTP/1.1 at once, so a short
/// request line is never held up).
enum HTTP2PrefaceCheck {
    /// Nothing read yet (and HTTP/2 is on).
    case pending
    /// Fewer than 4 bytes read, all of them the preface's start.
    case partial([UInt8])
    case http1
    /// The first bytes began the preface: they go to the HTTP/2 session.
    case http2([UInt8])

    /// What bytes just read decided.
    enum Outcome {
        /// Not yet: nothing for the HTTP/1.1 parser, read more.
        case undecided
        /// HTTP/1.1: these bytes (any held back included) go to the parser.
        case http1([UInt8])
        /// HTTP/2: the bytes are kept in `.http2` for the session.
        case http2
    }

    /// Looks at bytes read.
    mutating func check(_ bytes: [UInt8]) -> Outcome {
        let seen: [UInt8]
        switch self {
        case .http1, .http2: return .http1(bytes)
        case .pending: seen = bytes
        case .partial(let held): seen = held + bytes
        }
        if seen.count < 4 && HTTP2Preface.bytes.starts(with: seen) {
            self = .partial(seen)
            return .undecided
        }
        guard HTTP2Preface.begins(seen) else {
            self = .http1
            return .http1(seen)
        }
        self = .http2(seen)
        return .http2
    }
}
