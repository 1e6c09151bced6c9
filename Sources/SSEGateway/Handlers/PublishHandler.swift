import HTTPCore
import StreamHub

/// `POST /state/<topic>` and `POST /events/<topic>?event=<name>`: validates,
/// publishes once, and answers `{"id":"<id>","subscribers":<n>}`. Every error
/// is a status with a one-line reason and changes nothing.
struct PublishHandler: Sendable {
    let engine: any StreamEngine
    let token: PublishToken?
    let corsOrigin: String

    func respond(to request: HTTPRequest, channel: Channel, topic: String) async -> HTTPResponse {
        if let token, !token.authorizes(request.head.headers["Authorization"]) {
            return error(.unauthorized, "missing or wrong publish token",
                         extra: ["WWW-Authenticate": "Bearer"])
        }
        var event: String?
        if let query = request.head.query {
            guard PercentDecoding.queryItems(query) != nil else {
                return error(.badRequest, "malformed query string")
            }
            // EventName decodes escapes itself, exactly once as for topics, so it
            // gets the raw value (`%2541` must stay `%41`, not become `A`).
            if let name = Self.rawQueryValue("event", in: query) {
                switch EventName.validate(String(name)) {
                case .success(let valid): event = valid
                case .failure(let failure): return error(.badRequest, failure.reason)
                }
            }
        }
        if case .none = request.head.bodyFraming {
            // The client may have sent a body we cannot delimit: close rather
            // than read its bytes as the next request.
            return error(.lengthRequired, "a publish needs a body with Content-Length or chunked encoding",
                         extra: ["Connection": "close"])
        }
        guard let value = String(validating: request.body, as: UTF8.self) else {
            return error(.badRequest, "body is not valid UTF-8")
        }
        do {
            let result = try await engine.publish(topic: topic, channel: channel, data: value, event: event)
            var headers: HTTPHeaders = ["Content-Type": "application/json"]
            headers.add(name: "Access-Control-Allow-Origin", value: corsOrigin)
            return HTTPResponse(status: .ok, headers: headers,
                                body: Array("{\"id\":\"\(result.id)\",\"subscribers\":\(result.subscribers)}\n".utf8))
        } catch .unavailable {
            // Nothing was stored: the client may retry shortly (another gateway may take it).
            return self.error(.serviceUnavailable, "cannot store the value now: the cluster's Redis is unreachable",
                              extra: ["Retry-After": "1"])
        } catch {
            return self.error(.serviceUnavailable, "the gateway is shutting down")
        }
    }

    /// The raw, still percent-encoded value of the last `name` parameter of `query`
    /// (empty for a bare `name`), or nil when there is none.
    static func rawQueryValue(_ name: String, in query: String) -> Substring? {
        var value: Substring?
        for part in query.split(separator: "&") {
            if part == name {
                value = ""
            } else if part.hasPrefix(name + "=") {
                value = part.dropFirst(name.count + 1)
            }
        }
        return value
    }

    private func error(_ status: HTTPStatus, _ reason: String, extra: HTTPHeaders = HTTPHeaders()) -> HTTPResponse {
        var headers = extra
        headers.add(name: "Access-Control-Allow-Origin", value: corsOrigin)
        return .text(status, reason, headers: headers)
    }
}

/// The configured publish token, compared in constant time.
struct PublishToken: Sendable {
    let bytes: [UInt8]

    init(_ token: String) {
        bytes = Array(token.utf8)
    }

    /// True when `authorization` is `Bearer <token>`. The comparison takes
    /// the same time wherever the first difference is (length aside).
    func authorizes(_ authorization: String?) -> Bool {
        guard let authorization else { return false }
        let prefix = "bearer "
        guard authorization.utf8.count > prefix.utf8.count,
              authorization.prefix(prefix.count).lowercased() == prefix else { return false }
        let given = Array(authorization.utf8.dropFirst(prefix.utf8.count))
        var difference = UInt8(given.count == bytes.count ? 0 : 1)
        for index in 0..<bytes.count {
            difference |= bytes[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }
}
