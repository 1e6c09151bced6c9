import GatewayAPI
import HTTPCore
import StreamHub

/// `POST /state/<topic>` and `POST /events/<topic>?event=<name>`: validates,
/// publishes once, and answers `{"id":"<id>","subscribers":<n>}`. Every error
/// is a refusal (a status with a one-line reason) and changes nothing.
struct PublishHandler: Sendable {
    let engine: any StreamEngine
    /// The publish token and the token key: checked first, so a refused publish changes nothing.
    let access: AccessControl
    /// The reply's fields, with the policy's already (built once: shared storage, no
    /// copy or allocation per reply).
    let replyHeaders: HTTPHeaders

    init(engine: any StreamEngine, access: AccessControl, policy: ResponsePolicy) {
        self.engine = engine
        self.access = access
        replyHeaders = policy.applied(to: ["Content-Type": "application/json"])
    }

    nonisolated(nonsending) func respond(to request: HTTPRequest, channel: Channel, topic: String) async -> Reply {
        if case .failure(let refusal) = access.publish(request.head, topic: topic) {
            return .refusal(refusal)
        }
        let event: String?
        switch PublishQuery.eventName(in: request.head.query) {
        case .success(let name): event = name
        case .failure(let problem): return .refused(.badRequest, problem.reason)
        }
        if case .none = request.head.bodyFraming {
            // The client may have sent a body we cannot delimit: close rather
            // than read its bytes as the next request.
            return .refused(.lengthRequired, "a publish needs a body with Content-Length or chunked encoding",
                            headers: ["Connection": "close"])
        }
        guard let value = Self.text(of: request.body) else {
            return .refused(.badRequest, "body is not valid UTF-8")
        }
        do throws(PublishError) {
            // At once when the engine can (no executor switch after it), else through the wait.
            let result = if let atOnce = engine.publishAtOnce(topic: topic, channel: channel, data: value, event: event) {
                try atOnce.get()
            } else {
                try await engine.publish(topic: topic, channel: channel, data: value, event: event)
            }
            return .response(HTTPResponse(status: .ok, headers: replyHeaders, body: Self.replyBody(result)))
        } catch .unavailable(let reason) {
            // Not stored (or not on enough replicas): the client may retry shortly (another gateway may take it).
            return .refused(.serviceUnavailable, "cannot store the value now: \(reason)", headers: ["Retry-After": "1"])
        } catch {
            return .refused(.serviceUnavailable, "the gateway is shutting down")
        }
    }

    /// The body as text; nil when it is not UTF-8. An ASCII body (the usual one) is told
    /// eight bytes at a time and decoded without the standard library's generic
    /// validation (`String(validating:as:)` looks up type metadata on every call: 1,100
    /// instructions of a 128-byte publish, issue 27); any other is validated as before.
    static func text(of body: [UInt8]) -> String? {
        let ascii = body.withUnsafeBytes { bytes in
            var index = 0
            var high: UInt64 = 0
            while index + 8 <= bytes.count {
                high |= bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                index += 8
            }
            while index < bytes.count {
                high |= UInt64(bytes[index])
                index += 1
            }
            return high & 0x8080_8080_8080_8080 == 0
        }
        return ascii ? String(decoding: body, as: UTF8.self) : String(validating: body, as: UTF8.self)
    }

    /// `{"id":"<id>","subscribers":<n>}` and a newline, put together on the stack and
    /// appended to the reply's buffer at once (`FrameWriter`; string interpolation then a
    /// copy to bytes cost three allocations per publish, five `append(contentsOf:)` of the
    /// pieces about 800 instructions, and `Array(unsafeUninitializedCapacity:)` a generic
    /// metadata lookup of about 300, issue 27).
    static func replyBody(_ result: PublishResult) -> [UInt8] {
        typealias W = FrameWriter
        let subscribers = UInt64(max(0, result.subscribers))
        let idDigits = W.decimalDigits(result.id), countDigits = W.decimalDigits(subscribers)
        // {"id":"  …  ","subscribers":  …  }\n
        let count = 7 + idDigits + 16 + countDigits + 2
        var body: [UInt8] = []
        body.reserveCapacity(count)
        withUnsafeTemporaryAllocation(byteCount: count, alignment: 1) { bytes in
            var at = W.put(#"{"id":""#, into: bytes, at: 0)
            at = W.put(result.id, digits: idDigits, into: bytes, at: at)
            at = W.put(#"","subscribers":"#, into: bytes, at: at)
            at = W.put(subscribers, digits: countDigits, into: bytes, at: at)
            _ = W.put("}\n", into: bytes, at: at)
            body.append(contentsOf: UnsafeRawBufferPointer(bytes))
        }
        return body
    }
}
