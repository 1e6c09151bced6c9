/// What a request asks to do with a topic.
public enum TopicAction: String, Sendable, Equatable {
    case subscribe
    case publish
}

/// The rights a token's `sse` claim grants: `{"subscribe": [...], "publish": [...]}`.
///
/// Promises: a topic is granted for an action when at least one of that
/// action's patterns matches it; with no `sse` claim, or no list for the
/// action, nothing is granted. A request for several topics is granted only
/// when every one of them is.
public struct Grants: Sendable, Equatable {
    public let subscribe: [TopicPattern]
    public let publish: [TopicPattern]

    public init(subscribe: [TopicPattern] = [], publish: [TopicPattern] = []) {
        self.subscribe = subscribe
        self.publish = publish
    }

    /// Whether `action` on `topic` is granted.
    public func allows(_ action: TopicAction, topic: String) -> Bool {
        patterns(for: action).contains { $0.matches(topic) }
    }

    /// The first of `topics` that is not granted for `action`, or nil when all are.
    public func firstRefused(_ action: TopicAction, topics: some Sequence<String>) -> String? {
        let patterns = patterns(for: action)
        return topics.first { topic in !patterns.contains { $0.matches(topic) } }
    }

    private func patterns(for action: TopicAction) -> [TopicPattern] {
        action == .subscribe ? subscribe : publish
    }
}
