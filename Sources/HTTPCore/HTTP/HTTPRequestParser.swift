/// What `HTTPRequestParser.next()` found in the bytes received so far.
public enum HTTPParserEvent: Sendable, Equatable {
    /// The head of a request that has a body not yet fully buffered; returned once per such
    /// request, before its `.request`, so the server can answer `Expect: 100-continue`.
    /// Never returned for bodyless requests or for requests whose body is already buffered.
    case head(HTTPRequestHead)
    /// A complete request (head + whole decoded body).
    case request(HTTPRequest)
}

/// An incremental HTTP/1.1 request parser: bytes in, requests out, no I/O.
///
/// Feed it what the connection reads with `append`, then call `next()` until it returns nil
/// (need more bytes). Pipelined requests come out one at a time, in order. Requests the
/// server can't trust are refused by throwing an `HTTPParseError` carrying the status to
/// answer (`400`, `413`, `414`, `431`, `505`); after a throw the parser is dead and every
/// later `next()` throws the same error.
///
/// Memory: bounded by `HTTPLimits` (head, body) plus whatever the peer pipelined ahead.
/// Consumed bytes are dropped without quadratic copying, and once everything received has
/// been consumed the buffer's storage is released, so an idle connection pins nothing.
/// Owned by one connection; a value type, `Sendable` so it can move with its connection.
public struct HTTPRequestParser: Sendable {
    private let limits: HTTPLimits
    /// Bytes received; those before `readIndex` are consumed.
    private var buffer: [UInt8] = []
    /// The first byte not yet consumed.
    private var readIndex = 0
    /// The head of the next request, in progress.
    private var headParser: HTTPHeadParser
    /// A request whose head is parsed and whose body is still arriving.
    private var pending: PendingRequest?
    /// Set by the first refusal; the parser then only repeats it.
    private var failure: HTTPParseError?

    public init(limits: HTTPLimits = HTTPLimits()) {
        self.limits = limits
        self.headParser = HTTPHeadParser(limits: limits)
    }

    /// Adds bytes read from the connection. Ignored once the parser has failed.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, !bytes.isEmpty else { return }
        if readIndex > 0 && readIndex >= buffer.count - readIndex {
            // The consumed part is at least as large as what is moved: linear overall.
            buffer.removeSubrange(0..<readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Adds bytes read from the connection. Ignored once the parser has failed.
    ///
    /// When nothing is buffered (the usual case: a whole small request per read) the array
    /// itself becomes the buffer, no copy; its storage is released with the rest once every
    /// byte is consumed, so it is held only while a request is incomplete.
    public mutating func append(_ bytes: [UInt8]) {
        guard failure == nil, !bytes.isEmpty else { return }
        if buffer.isEmpty {
            buffer = bytes
            readIndex = 0
            return
        }
        bytes.withUnsafeBytes { append($0) }
    }

    /// The next event from the bytes buffered so far; nil means more bytes are needed.
    /// After a throw the parser is dead: every later call throws the same error.
    public mutating func next() throws(HTTPParseError) -> HTTPParserEvent? {
        if let failure { throw failure }
        do {
            let event = try step()
            if readIndex == buffer.count {
                buffer = []  // release the storage: an idle connection pins nothing
                readIndex = 0
            }
            return event
        } catch {
            failure = error
            buffer = []
            readIndex = 0
            pending = nil
            headParser = HTTPHeadParser(limits: limits)
            throw error
        }
    }

    /// True while bytes are held that are not yet part of a returned request: unparsed
    /// bytes, or part of a request (head lines, body) parsed but not yet returned. The
    /// server bounds how long such a request may take to arrive.
    public var isMidRequest: Bool {
        readIndex < buffer.count || headParser.hasStarted || pending != nil
    }

    /// The capacity of the receive buffer (for tests of the memory rule).
    var bufferCapacity: Int { buffer.capacity }

    private mutating func step() throws(HTTPParseError) -> HTTPParserEvent? {
        if pending != nil {
            return try readBody().map { .request($0) }
        }
        let storage = buffer  // a second reference for reading; `buffer` is not mutated meanwhile
        let start = readIndex
        let (consumed, parsed) = try storage.withUnsafeBufferPointer { all throws(HTTPParseError) in
            try headParser.parse(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: all[start...])))
        }
        readIndex += consumed
        guard let head = parsed else { return nil }
        switch head.bodyFraming {
        case .none, .contentLength(0):
            return .request(HTTPRequest(head: head, body: []))
        case .contentLength(let length) where buffer.count - readIndex >= length:
            // The common case: the whole body arrived with the head.
            let body = Array(buffer[readIndex..<(readIndex + length)])
            readIndex += length
            return .request(HTTPRequest(head: head, body: body))
        case .contentLength(let length):
            pending = PendingRequest(head: head, reader: .length(remaining: length))
        case .chunked:
            pending = PendingRequest(head: head, reader: .chunked(ChunkedBodyDecoder(limits: limits)))
        }
        if let request = try readBody() { return .request(request) }
        return .head(head)
    }

    /// Moves buffered bytes into the pending request's body; the request once it is complete.
    private mutating func readBody() throws(HTTPParseError) -> HTTPRequest? {
        guard var request = pending.take() else { return nil }  // taken, so the body has one owner
        let storage = buffer
        let start = readIndex
        let (consumed, done) = try storage.withUnsafeBufferPointer { all throws(HTTPParseError) in
            try request.read(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: all[start...])))
        }
        readIndex += consumed
        if done { return HTTPRequest(head: request.head, body: request.body) }
        pending = request
        return nil
    }
}

/// A request whose head is parsed and whose body is arriving.
private struct PendingRequest {
    enum Reader {
        case length(remaining: Int)
        case chunked(ChunkedBodyDecoder)
    }

    let head: HTTPRequestHead
    var reader: Reader
    var body: [UInt8] = []

    init(head: HTTPRequestHead, reader: Reader) {
        self.head = head
        self.reader = reader
        if case .length(let length) = reader { body.reserveCapacity(length) }
    }

    /// Takes body bytes from `bytes`; returns how many were consumed and whether the body is complete.
    mutating func read(_ bytes: UnsafeRawBufferPointer) throws(HTTPParseError) -> (consumed: Int, done: Bool) {
        switch reader {
        case .length(let remaining):
            let n = min(remaining, bytes.count)
            body.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[0..<n]))
            reader = .length(remaining: remaining - n)
            return (n, n == remaining)
        case .chunked(var decoder):
            let result = try decoder.decode(bytes, into: &body)
            reader = .chunked(decoder)
            return result
        }
    }
}
