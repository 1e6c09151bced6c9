/// A Redis Cluster to join: parsed from
/// `redis+cluster://[[user]:password@]host:port[,host:port…]`. The nodes given
/// are seeds: the first that answers gives the slot map, which names the rest.
///
/// Promises: a value that parsed names at least one seed (host and port as
/// `RedisURL` reads them, 6379 when a port is absent), no seed twice; every seed
/// carries the credentials, and database 0 (a cluster has no other; `/0` is
/// accepted, any other database refused). `description` never shows the password.
public struct RedisClusterURL: Sendable, Equatable, CustomStringConvertible {
    /// The seeds in the order given, each with the credentials.
    public var seeds: [RedisURL]
    public var user: String?
    public var password: String?

    public static let scheme = "redis+cluster://"

    public init(seeds: [RedisURL], user: String? = nil, password: String? = nil) {
        self.seeds = seeds.map { RedisURL(host: $0.host, port: $0.port, user: user, password: password) }
        self.user = user
        self.password = password
    }

    /// Parses `redis+cluster://[[user]:password@]host[:port][,host[:port]…][/0]`.
    /// - Throws: `RedisURLError` with a one-line reason.
    public init(parsing text: String) throws(RedisURLError) {
        guard text.utf8.count >= Self.scheme.utf8.count, String(text.prefix(Self.scheme.count)).lowercased() == Self.scheme else {
            throw RedisURLError(reason: "scheme must be redis+cluster://")
        }
        var rest = Substring(text.dropFirst(Self.scheme.count))
        if rest.contains("?") || rest.contains("#") {
            throw RedisURLError(reason: "query and fragment are not supported")
        }
        // The credentials as RedisURL reads them (the last '@' ends them).
        var credentials = ""
        if let at = rest.lastIndex(of: "@") {
            credentials = String(rest[...at])
            rest = rest[rest.index(after: at)...]
        }
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            guard path.isEmpty || path == "0" else {
                throw RedisURLError(reason: "a Redis Cluster has only database 0")
            }
            rest = rest[..<slash]
        }
        var seeds: [RedisURL] = []
        for host in rest.split(separator: ",", omittingEmptySubsequences: false) {
            guard !host.isEmpty else { throw RedisURLError(reason: "an empty node in the list of seeds") }
            let seed = try RedisURL(parsing: "redis://" + credentials + host)
            guard !seeds.contains(where: { $0.host == seed.host && $0.port == seed.port }) else {
                throw RedisURLError(reason: "seed \(host) is given twice")
            }
            seeds.append(seed)
        }
        guard let first = seeds.first else { throw RedisURLError(reason: "no seed node given") }
        self.init(seeds: seeds, user: first.user, password: first.password)
    }

    /// Whether `text` has this type's scheme (to choose a parser by it).
    public static func hasScheme(_ text: String) -> Bool {
        String(text.prefix(scheme.count)).lowercased() == scheme
    }

    public var description: String {
        var text = Self.scheme
        if password != nil { text += "\(user ?? ""):***@" }
        text += seeds.map { $0.host.contains(":") ? "[\($0.host)]:\($0.port)" : "\($0.host):\($0.port)" }.joined(separator: ",")
        return text
    }
}
