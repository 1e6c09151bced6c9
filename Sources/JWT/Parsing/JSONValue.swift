/// A JSON value as `JSONReader` returns it: what a token's header and claims
/// may hold, with objects that keep their members in order and can hold no
/// key twice.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// Every number as a finite `Double`: claims need seconds since the epoch,
    /// which a `Double` holds exactly far beyond any date a token can name.
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

/// A JSON object: members in document order, keys distinct.
///
/// Promises: no two members have equal keys (`String` equality, so two
/// spellings of one canonical text count as the same key), which is what
/// `JSONReader` checks before it builds one.
public struct JSONObject: Equatable, Sendable {
    public struct Member: Equatable, Sendable {
        public let key: String
        public let value: JSONValue
    }

    public let members: [Member]

    /// The value of the member named `key`, if there is one.
    public subscript(key: String) -> JSONValue? {
        members.first { $0.key == key }?.value
    }
}

/// Where a JSON text broke the rules: a byte offset and what was expected.
public struct JSONError: Error, Equatable, Sendable {
    public let offset: Int
    public let problem: String
}

/// The bounds `JSONReader` keeps, whatever the input.
public struct JSONLimits: Sendable, Equatable {
    /// Largest text accepted, in bytes.
    public var maximumBytes = 8192
    /// Deepest nesting of arrays and objects (the top-level object is depth 1).
    public var maximumDepth = 16

    public init() {}
}
