/// One entry of a token's `sse.subscribe` or `sse.publish` list.
///
/// Promises: `*` matches every topic; `<prefix>/*` matches every topic under
/// `<prefix>/` at any depth (`chat/*` matches `chat/a` and `chat/a/b`, not
/// `chat` nor `chatroom/x`); anything else without a `*` matches exactly that
/// name. Matching compares bytes (a decoded topic name is ASCII), so no two
/// spellings of a name ever match each other. A `*` anywhere else (`chat*`,
/// `*/x`, `a/*/b`), an empty pattern and an empty prefix (`/*`) are not patterns.
public enum TopicPattern: Sendable, Hashable {
    case any
    /// Topics that start with this prefix followed by `/` (stored without `/*`).
    case prefix(String)
    case exact(String)

    /// The pattern `text` spells, or nil when it is none.
    public init?(_ text: String) {
        let bytes = Array(text.utf8)
        let star = UInt8(ascii: "*")
        if bytes == [star] {
            self = .any
        } else if bytes.count > 2, bytes.suffix(2).elementsEqual("/*".utf8), !bytes.dropLast(2).contains(star) {
            self = .prefix(String(decoding: bytes.dropLast(2), as: UTF8.self))
        } else if !bytes.isEmpty, !bytes.contains(star) {
            self = .exact(text)
        } else {
            return nil
        }
    }

    /// Whether the pattern grants `topic` (a decoded topic name).
    public func matches(_ topic: String) -> Bool {
        switch self {
        case .any:
            return true
        case .exact(let name):
            return topic.utf8.elementsEqual(name.utf8)
        case .prefix(let prefix):
            let topicBytes = topic.utf8
            let prefixBytes = prefix.utf8
            guard topicBytes.count > prefixBytes.count + 1 else { return false }
            let slash = topicBytes.index(topicBytes.startIndex, offsetBy: prefixBytes.count)
            return topicBytes[slash] == UInt8(ascii: "/") && topicBytes[..<slash].elementsEqual(prefixBytes)
        }
    }

    /// The pattern as a token spells it.
    public var text: String {
        switch self {
        case .any: return "*"
        case .prefix(let prefix): return prefix + "/*"
        case .exact(let name): return name
        }
    }
}
