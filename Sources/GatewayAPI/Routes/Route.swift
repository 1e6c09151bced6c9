import HTTPCore
import StreamHub

/// The route table of API.md: which method and path reach which part of the gateway.
///
/// Promises: `match` is pure and total; every request gets exactly one route. A path
/// under `/state/` or `/events/` (or either alone) is a channel path whatever its
/// topic: a bad topic is `badTopic` (`400`), a method other than `GET`, `HEAD`,
/// `POST` or `OPTIONS` is `methodNotAllowed` (`405` with `Allow`). Every other path
/// is read-only (`GET`, `HEAD`, `OPTIONS`). `OPTIONS` is a CORS preflight anywhere.
/// Topics are validated here, before any handler runs. `GET` and `HEAD` of `/state`
/// and `/events` themselves, with `?topic=` parameters, subscribe to several topics
/// in one stream (`TopicsQuery`).
public enum Route: Equatable, Sendable {
    /// `GET` or `HEAD /state/<topic>` and `/events/<topic>`.
    case subscribe(Channel, topic: String)
    /// `GET` or `HEAD /state?topic=…&topic=…` and `/events?topic=…`: several topics in one stream.
    case subscribeTopics(Channel, topics: [String])
    /// `GET` or `HEAD /state` or `/events` whose `topic` parameters are refused.
    case badTopics(TopicsQuery.Problem)
    /// `POST /state/<topic>` and `/events/<topic>`.
    case publish(Channel, topic: String)
    /// `OPTIONS` on any path; `allow` lists the path's methods.
    case preflight(allow: String)
    /// A method the path does not take; `allow` lists those it does.
    case methodNotAllowed(allow: String)
    /// A channel path whose topic breaks the rules of `TopicName`.
    case badTopic(TopicError)
    /// `GET /healthz`: the process is up.
    case health
    /// `GET /readyz`: the engine takes publishes and subscriptions.
    case ready
    /// `GET /metrics`.
    case metrics
    /// Any other `GET` or `HEAD`: a file of `public/`.
    case file

    /// The methods of `/state/…` and `/events/…`.
    public static let channelMethods = "GET, HEAD, POST, OPTIONS"
    /// The methods of every other path.
    public static let readMethods = "GET, HEAD, OPTIONS"

    /// The route of `method` on `rawPath` (the path still percent-encoded, without the
    /// query); `query` (without the `?`) only matters to a several-topic stream.
    public static func match(method: String, rawPath path: String, query: String? = nil) -> Route {
        if let (channel, remainder) = channelPath(path) {
            if method == "OPTIONS" { return .preflight(allow: channelMethods) }
            guard method == "GET" || method == "HEAD" || method == "POST" else {
                return .methodNotAllowed(allow: channelMethods)
            }
            if method != "POST", path == "/state" || path == "/events" {
                switch TopicsQuery.topics(in: query) {
                case .failure(let problem): return .badTopics(problem)
                case .success(let topics): return .subscribeTopics(channel, topics: topics)
                }
            }
            switch TopicName.parse(rawPath: remainder) {
            case .failure(let failure): return .badTopic(failure)
            case .success(let topic):
                return method == "POST" ? .publish(channel, topic: topic) : .subscribe(channel, topic: topic)
            }
        }
        if method == "OPTIONS" { return .preflight(allow: readMethods) }
        guard method == "GET" || method == "HEAD" else { return .methodNotAllowed(allow: readMethods) }
        switch path {
        case "/healthz": return .health
        case "/readyz": return .ready
        case "/metrics": return .metrics
        default: return .file
        }
    }

    /// `/state/<rest>` or `/events/<rest>`, with the raw remainder after the prefix.
    /// Compared as UTF-8 bytes in place and cut at a byte offset: `hasPrefix` and
    /// `dropFirst` on the `String` itself walk it by `Character` (grapheme breaking),
    /// about 1,000 instructions a request for an ASCII prefix (issue 27). A path whose
    /// bytes begin `/state/` is a channel path even when a combining mark follows the slash
    /// (HTTP/2 can carry one; HTTP/1.1's request line cannot): its topic is then refused.
    static func channelPath(_ path: String) -> (Channel, Substring)? {
        guard let (channel, length) = path.withUTF8Bytes(channelPrefix) else { return nil }
        return (channel, Substring(path.utf8.dropFirst(length)))
    }

    /// The channel a path's bytes name and the length of the prefix that names it
    /// (`/state/`, `/events/`, or the whole path `/state` or `/events`).
    private static func channelPrefix(_ bytes: UnsafeBufferPointer<UInt8>) -> (Channel, Int)? {
        if let length = prefixLength(of: bytes, naming: "/state") { return (.state, length) }
        if let length = prefixLength(of: bytes, naming: "/events") { return (.events, length) }
        return nil
    }

    /// `name`'s length when `bytes` are exactly `name`, one more when they go on with `/`.
    private static func prefixLength(of bytes: UnsafeBufferPointer<UInt8>, naming name: StaticString) -> Int? {
        let count = name.utf8CodeUnitCount
        guard bytes.count >= count else { return nil }
        for index in 0..<count where bytes[index] != name.utf8Start[index] { return nil }
        if bytes.count == count { return count }
        return bytes[count] == UInt8(ascii: "/") ? count + 1 : nil
    }
}
