import HTTPCore

/// The topics of a several-topic stream: `GET /events?topic=<t1>&topic=<t2>…` and
/// `/state?topic=…` (API.md, "Several topics in one stream").
///
/// Promises: 1 to `maximumTopics` distinct topics, in parameter order. Each value is
/// percent-decoded exactly once (so `%2F` is a slash, as `encodeURIComponent` and
/// `URLSearchParams` write it, and `%2541` is the bytes `%41`, refused for the `%`),
/// then follows `TopicName`'s rules. Other parameters are ignored. Every refusal
/// has a one-line reason that never echoes the client's bytes.
public enum TopicsQuery {
    /// The most topics one stream may follow.
    public static let maximumTopics = 32

    /// Why a several-topic subscription was refused (`400`).
    public enum Problem: Error, Equatable, Sendable {
        /// No `topic` parameter.
        case noTopic
        /// More than `maximumTopics` of them.
        case tooManyTopics
        /// The same topic twice (after decoding).
        case duplicateTopic
        /// A malformed escape anywhere in the query, or a part that is not UTF-8 once decoded.
        case malformed
        /// A value that breaks the topic rules.
        case badTopic(TopicError)

        /// One line for the `400` body.
        public var reason: String {
            switch self {
            case .noTopic: return "no topic: name one to \(maximumTopics) topics with ?topic=<name>&topic=<name>"
            case .tooManyTopics: return "more than \(maximumTopics) topics in one stream"
            case .duplicateTopic: return "a topic is named twice"
            case .malformed: return "malformed query string"
            case .badTopic(let error): return error.reason
            }
        }
    }

    /// The topics `query` names, or why it is refused.
    public static func topics(in query: String?) -> Result<[String], Problem> {
        guard let query else { return .failure(.noTopic) }
        // Names as written, as `PublishQuery` matches `event` (README, "Choices").
        guard let items = PercentDecoding.queryItems(query, decodingNames: false) else { return .failure(.malformed) }
        var topics: [String] = []
        var seen: Set<String> = []
        for item in items where item.name == "topic" {
            guard topics.count < maximumTopics else { return .failure(.tooManyTopics) }
            switch validate(decoded: item.value) {
            case .failure(let error): return .failure(.badTopic(error))
            case .success(let topic):
                guard seen.insert(topic).inserted else { return .failure(.duplicateTopic) }
                topics.append(topic)
            }
        }
        return topics.isEmpty ? .failure(.noTopic) : .success(topics)
    }

    /// A value already decoded once: a `%` left in it is a refused byte (never decoded again).
    static func validate(decoded value: String) -> Result<String, TopicError> {
        if value.utf8.contains(UInt8(ascii: "%")) {
            return .failure(TopicError(subject: .topic, problem: .disallowedCharacter))
        }
        return TopicName.parse(rawPath: Substring(value))
    }
}
