import HTTPCore

/// The query of a publish: `?event=<name>` names the SSE event type.
///
/// Promises (API.md, "Publishing"; README, "Choices"): a malformed escape anywhere in
/// the query is refused; other parameters are ignored; the last `event` wins; the name
/// follows `EventName`, its escapes decoded exactly once (`%2541` is `%41`, refused).
public enum PublishQuery {
    /// Why a publish's query was refused.
    public enum Problem: Error, Equatable, Sendable {
        /// A `%` not followed by two hex digits, or a part that is not UTF-8 once decoded.
        case malformed
        /// `?event=` names no valid event.
        case badEventName(TopicError)

        /// One line for the `400` body.
        public var reason: String {
            switch self {
            case .malformed: return "malformed query string"
            case .badEventName(let error): return error.reason
            }
        }
    }

    /// The event name `query` asks for (nil for none), or why the query is refused.
    public static func eventName(in query: String?) -> Result<String?, Problem> {
        guard let query else { return .success(nil) }
        guard PercentDecoding.queryItems(query) != nil else { return .failure(.malformed) }
        // EventName decodes escapes itself, exactly once as for topics, so it
        // gets the raw value (`%2541` must stay `%41`, not become `A`).
        guard let raw = rawValue("event", in: query) else { return .success(nil) }
        return EventName.validate(String(raw)).map { Optional($0) }.mapError { .badEventName($0) }
    }

    /// The raw, still percent-encoded value of the last `name` parameter of `query`
    /// (empty for a bare `name`), or nil when there is none.
    public static func rawValue(_ name: String, in query: String) -> Substring? {
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
}
