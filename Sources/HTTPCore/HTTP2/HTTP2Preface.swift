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

/// Whether a cleartext connection turned out to speak HTTP/2: decided by its first read.
enum HTTP2PrefaceCheck {
    /// Nothing read yet (and HTTP/2 is on).
    case pending
    case http1
    /// The first bytes began the preface: they go to the HTTP/2 session.
    case http2([UInt8])

    /// Looks at bytes read; true when they go to HTTP/2 instead of the HTTP/1.1 parser.
    mutating func check(_ bytes: [UInt8]) -> Bool {
        guard case .pending = self else { return false }
        guard HTTP2Preface.begins(bytes) else {
            self = .http1
            return false
        }
        self = .http2(bytes)
        return true
    }
}
