/// The useful part of a publish's `200` answer: `{"id":"<id>","subscribers":<n>}`
/// from the gateway. Read by looking for the two keys, so a JSON answer with
/// more fields or another id key (Nchan's `last_message_id`) also works.
struct PublishReply: Sendable, Equatable {
    /// The id as the server wrote it (a decimal number on the gateway).
    var id: String?
    /// How many subscribers the publish was queued for.
    var subscribers: Int

    init(id: String?, subscribers: Int) {
        self.id = id
        self.subscribers = subscribers
    }

    /// Nil when the body has no `"subscribers": <number>`.
    init?(body: [UInt8]) {
        guard let count = Self.value(of: "subscribers", in: body).flatMap({ Int($0) }), count >= 0 else { return nil }
        subscribers = count
        id = Self.value(of: "id", in: body) ?? Self.value(of: "last_message_id", in: body)
    }

    /// The id as a number, when it is one.
    var numericID: UInt64? { id.flatMap { UInt64($0) } }

    /// The scalar after `"key":` — a string's contents or a bare number.
    private static func value(of key: String, in body: [UInt8]) -> String? {
        let quoted = Array("\"\(key)\"".utf8)
        guard body.count >= quoted.count,
              let start = (0...(body.count - quoted.count)).first(where: { body[$0..<($0 + quoted.count)].elementsEqual(quoted) })
        else { return nil }
        var rest = body[(start + quoted.count)...].drop { $0 == UInt8(ascii: " ") }
        guard rest.first == UInt8(ascii: ":") else { return nil }
        rest = rest.dropFirst().drop { $0 == UInt8(ascii: " ") }
        if rest.first == UInt8(ascii: "\"") {
            return String(decoding: rest.dropFirst().prefix { $0 != UInt8(ascii: "\"") }, as: UTF8.self)
        }
        let number = rest.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
        return number.isEmpty ? nil : String(decoding: number, as: UTF8.self)
    }
}
