/// An incremental parser of HTTP/1.1 responses, for the client side (tests,
/// the load tool): a status line and headers, then a body delimited by
/// `Content-Length`, chunked encoding, or the end of the connection. Bodies
/// arrive as they are decoded, so a never-ending SSE stream can be read
/// piece by piece.
public struct HTTPResponseParser: Sendable {
    /// A parsed status line and header block.
    public struct Head: Sendable, Equatable {
        public var status: Int
        public var reason: String
        public var headers: HTTPHeaders
    }

    public enum Event: Sendable, Equatable {
        case head(Head)
        /// Decoded body bytes (possibly a part of the body).
        case body([UInt8])
        /// The body is complete (never for close-delimited bodies: see `finishAtEOF`).
        case end
    }

    public struct Failure: Error, Equatable {
        public let reason: String

        public init(reason: String) {
            self.reason = reason
        }
    }

    private enum State {
        case head
        case fixed(remaining: Int)
        case chunkSize
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
    }

    private var buffer: [UInt8] = []
    private var state = State.head
    /// Whether the next response answers a HEAD request (no body whatever the headers say).
    private var noBody = false

    public init() {}

    /// The next response answers a HEAD request: read its head only.
    public mutating func expectResponseToHEAD() {
        noBody = true
    }

    public mutating func append(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
    }

    /// The next event, nil when more bytes are needed.
    public mutating func next() throws(Failure) -> Event? {
        switch state {
        case .head:
            guard let end = headEnd() else { return nil }
            let head = try parseHead(Array(buffer[..<end.start]))
            buffer.removeFirst(end.next)
            if head.status >= 100 && head.status < 200 { return .head(head) }
            let headOnly = noBody
            noBody = false
            if headOnly || head.status == 204 || head.status == 304 {
                state = .fixed(remaining: 0)
            } else if head.headers["Transfer-Encoding"]?.lowercased() == "chunked" {
                state = .chunkSize
            } else if let length = head.headers["Content-Length"].flatMap({ Int($0) }) {
                state = .fixed(remaining: length)
            } else {
                state = .untilClose
            }
            return .head(head)
        case .fixed(let remaining):
            if remaining == 0 {
                state = .head
                return .end
            }
            guard !buffer.isEmpty else { return nil }
            let take = min(remaining, buffer.count)
            let bytes = Array(buffer[..<take])
            buffer.removeFirst(take)
            state = .fixed(remaining: remaining - take)
            return .body(bytes)
        case .chunkSize:
            guard let line = takeLine() else { return nil }
            let hex = line.prefix { $0 != UInt8(ascii: ";") }
            guard let size = Int(String(decoding: hex, as: UTF8.self).trimmingSpaces, radix: 16) else {
                throw Failure(reason: "bad chunk size")
            }
            state = size == 0 ? .trailers : .chunkData(remaining: size)
            return try next()
        case .chunkData(let remaining):
            guard !buffer.isEmpty else { return nil }
            let take = min(remaining, buffer.count)
            let bytes = Array(buffer[..<take])
            buffer.removeFirst(take)
            state = take == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - take)
            return .body(bytes)
        case .chunkDataEnd:
            guard let line = takeLine() else { return nil }
            guard line.isEmpty else { throw Failure(reason: "chunk not followed by CRLF") }
            state = .chunkSize
            return try next()
        case .trailers:
            guard let line = takeLine() else { return nil }
            if line.isEmpty {
                state = .head
                return .end
            }
            return try next()
        case .untilClose:
            guard !buffer.isEmpty else { return nil }
            defer { buffer.removeAll() }
            return .body(buffer)
        }
    }

    /// After a fixed body is fully delivered the parser is back at `.head`;
    /// this tells whether a response is still in progress.
    public var isBetweenResponses: Bool {
        if case .head = state { return buffer.isEmpty }
        return false
    }

    private func headEnd() -> (start: Int, next: Int)? {
        var index = 0
        while index < buffer.count {
            if buffer[index] == 0x0A {
                if index + 1 < buffer.count && buffer[index + 1] == 0x0A { return (index, index + 2) }
                if index + 2 < buffer.count && buffer[index + 1] == 0x0D && buffer[index + 2] == 0x0A {
                    return (index, index + 3)
                }
            }
            index += 1
        }
        return nil
    }

    private mutating func takeLine() -> [UInt8]? {
        guard let newline = buffer.firstIndex(of: 0x0A) else { return nil }
        var line = Array(buffer[..<newline])
        if line.last == 0x0D { line.removeLast() }
        buffer.removeFirst(newline + 1)
        return line
    }

    private func parseHead(_ bytes: [UInt8]) throws(Failure) -> Head {
        // Split on LF bytes (a Swift String would keep CRLF together as one character).
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { line -> String in
            String(decoding: line.last == 0x0D ? line.dropLast() : line[...], as: UTF8.self)
        }
        guard !lines.isEmpty else { throw Failure(reason: "empty head") }
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw Failure(reason: "bad status line: \(statusLine)")
        }
        var headers = HTTPHeaders()
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw Failure(reason: "bad header: \(line)") }
            headers.add(name: String(line[..<colon]), value: String(line[line.index(after: colon)...]).trimmingSpaces)
        }
        return Head(status: status, reason: parts.count > 2 ? String(parts[2]) : "", headers: headers)
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { $0 != " " && $0 != "\t" }) else { return "" }
        let last = scalars.lastIndex(where: { $0 != " " && $0 != "\t" })!
        return String(scalars[first...last])
    }
}
