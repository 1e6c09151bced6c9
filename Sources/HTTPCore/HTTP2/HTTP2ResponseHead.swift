/// A handler's response as HTTP/2 sends it: the same status, fields and body as on
/// HTTP/1.1, less the connection-specific fields (RFC 9113 §8.2.2), with the
/// server's `Date` and (for a fixed body) `Content-Length`. `HEAD` gets the head
/// a `GET` would get.
enum HTTP2ResponseHead {
    /// Fields HTTP/2 forbids or the server sets itself.
    private static let dropped: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "date", "content-length",
    ]

    static func make(_ response: HTTPResponse, isHEAD: Bool)
        -> (Int, [(name: String, value: String)], HTTP2SessionCore.Body) {
        let status = response.head.status.code
        let mayHaveBody = !(100..<200).contains(status) && status != 204 && status != 304
        var fields: [(name: String, value: String)] = []
        fields.reserveCapacity(response.head.headers.count + 2)
        var givenLength: String?
        for field in response.head.headers {
            let name = field.name.lowercased()
            if name == "content-length" { givenLength = field.value }
            if dropped.contains(name) { continue }
            fields.append((name, field.value))
        }
        fields.append(("date", HTTPDate.now()))
        switch response.body {
        case .bytes(let bytes):
            if mayHaveBody {
                // A HEAD answer may already carry the length the GET body would have.
                fields.append(("content-length", isHEAD ? givenLength ?? "\(bytes.count)" : "\(bytes.count)"))
            }
            return (status, fields, isHEAD || !mayHaveBody || bytes.isEmpty ? .none : .bytes(bytes))
        case .source(let sourced):
            return (status, fields, isHEAD ? .none : .source(prelude: sourced.prelude, sourced.source))
        }
    }
}
