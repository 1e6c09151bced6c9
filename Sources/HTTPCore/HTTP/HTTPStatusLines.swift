/// The HTTP/1.1 status lines of the statuses the server names (`HTTPStatus.ok`, …), made
/// once as bytes (`HTTP/1.1 200 OK\r\n`) so a response head starts with one copy.
enum HTTPStatusLines {
    /// Indexed by code − 100; a line is used only when the reason phrase matches too.
    private static let table: [(reason: String, line: [UInt8])?] = {
        var table = [(reason: String, line: [UInt8])?](repeating: nil, count: 900)
        let known: [HTTPStatus] = [
            .continue, .ok, .noContent, .notModified, .badRequest, .unauthorized, .notFound,
            .methodNotAllowed, .requestTimeout, .lengthRequired, .contentTooLarge, .uriTooLong,
            .expectationFailed, .headersTooLarge, .internalServerError, .notImplemented,
            .serviceUnavailable, .versionNotSupported,
        ]
        for status in known {
            var line: [UInt8] = []
            append(status, version: .http11, to: &line)
            table[status.code - 100] = (status.reason, line)
        }
        return table
    }()

    /// The cached HTTP/1.1 line of `status`, or nil when it is not one of the named statuses.
    static func line(for status: HTTPStatus) -> [UInt8]? {
        guard (100...999).contains(status.code), let entry = table[status.code - 100],
              entry.reason == status.reason else { return nil }
        return entry.line
    }

    /// Writes `<version> <code> <reason>\r\n`.
    static func append(_ status: HTTPStatus, version: HTTPVersion, to out: inout [UInt8]) {
        precondition((100...999).contains(status.code), "status code \(status.code) is not three digits")
        out.append(contentsOf: version.text.utf8)
        out.append(HTTPSyntax.space)
        out.append(0x30 + UInt8(status.code / 100))
        out.append(0x30 + UInt8(status.code / 10 % 10))
        out.append(0x30 + UInt8(status.code % 10))
        out.append(HTTPSyntax.space)
        var reason = status.reason
        reason.withUTF8 { HTTPResponseHeadEncoder.appendChecked(UnsafeRawBufferPointer($0), to: &out) }
        out.append(HTTPSyntax.cr)
        out.append(HTTPSyntax.lf)
    }
}
