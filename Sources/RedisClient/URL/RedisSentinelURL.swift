/// Where Redis Sentinel runs and which master to ask it for: parsed from
/// `redis+sentinel://[[user]:password@]host:port[,host:port…]/<master-name>[/db]`
/// with `?sentinel_password=…&sentinel_user=…` when the sentinels have their own auth.
///
/// Promises: a value that parsed names at least one sentinel (host and port as
/// `RedisURL` reads them, 26379 when a port is absent), a master name that is not
/// empty, and a database ≥ 0. The credentials before `@` are the master's; the
/// sentinels get `sentinel_user`/`sentinel_password`, or none. `description` never
/// shows a password.
public struct RedisSentinelURL: Sendable, Equatable, CustomStringConvertible {
    /// The sentinels, in the order given (each with the sentinels' credentials).
    public var sentinels: [RedisURL]
    /// The name the sentinels monitor the master under (`sentinel monitor <name> …`).
    public var masterName: String
    public var user: String?
    public var password: String?
    public var database: Int

    public static let defaultPort = 26379

    public init(sentinels: [RedisURL], masterName: String, user: String? = nil, password: String? = nil,
                database: Int = 0) {
        self.sentinels = sentinels
        self.masterName = masterName
        self.user = user
        self.password = password
        self.database = database
    }

    /// The master at `host:port`, with the master's credentials and database.
    public func master(host: String, port: Int) -> RedisURL {
        RedisURL(host: host, port: port, user: user, password: password, database: database)
    }

    /// Parses `redis+sentinel://[[user]:password@]host:port[,host:port…]/<master-name>[/db][?query]`.
    /// - Throws: `RedisURLError` with a one-line reason.
    public init(parsing text: String) throws(RedisURLError) {
        let scheme = "redis+sentinel://"
        guard String(text.prefix(scheme.count)).lowercased() == scheme else {
            throw RedisURLError(reason: "scheme must be redis+sentinel://")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        if rest.contains("#") { throw RedisURLError(reason: "a fragment is not supported") }
        var sentinelUser: String?
        var sentinelPassword: String?
        if let question = rest.firstIndex(of: "?") {
            (sentinelUser, sentinelPassword) = try Self.query(rest[rest.index(after: question)...])
            rest = rest[..<question]
        }
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            (user, password) = try RedisURL.credentials(rest[..<at])
            rest = rest[rest.index(after: at)...]
        }
        guard let slash = rest.firstIndex(of: "/") else {
            throw RedisURLError(reason: "the master's name is missing: …/<master-name>")
        }
        let path = rest[rest.index(after: slash)...].split(separator: "/", omittingEmptySubsequences: false)
        let hosts = rest[..<slash]
        guard let name = path.first, !name.isEmpty else {
            throw RedisURLError(reason: "the master's name is missing: …/<master-name>")
        }
        guard path.count <= 2 else { throw RedisURLError(reason: "the path must be /<master-name>[/db]") }
        let masterName = try RedisURL.decoded(name, what: "master name")
        guard !masterName.isEmpty, masterName.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw RedisURLError(reason: "the master's name must be printable ASCII without spaces")
        }
        var database = 0
        if path.count == 2 {
            let text = path[1]
            guard text.utf8.count <= 9, !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let number = Int(text) else {
                throw RedisURLError(reason: "database must be a number from 0 to 999999999")
            }
            database = number
        }
        var sentinels: [RedisURL] = []
        for part in hosts.split(separator: ",", omittingEmptySubsequences: false) {
            guard !part.isEmpty else { throw RedisURLError(reason: "a sentinel's host is missing") }
            var (host, port) = try RedisURL.hostAndPort(part)
            let portGiven = part.hasPrefix("[") ? part.contains("]:") : part.contains(":")
            if !portGiven { port = Self.defaultPort }
            sentinels.append(RedisURL(host: host, port: port, user: sentinelUser, password: sentinelPassword))
        }
        guard sentinels.count <= 32 else { throw RedisURLError(reason: "at most 32 sentinels") }
        self.init(sentinels: sentinels, masterName: masterName, user: user, password: password, database: database)
    }

    /// `sentinel_user=…&sentinel_password=…`, percent-decoded; nothing else is accepted.
    private static func query(_ text: Substring) throws(RedisURLError) -> (String?, String?) {
        var user: String?
        var password: String?
        for pair in text.split(separator: "&") {
            guard let equals = pair.firstIndex(of: "=") else {
                throw RedisURLError(reason: "query parameters must be name=value")
            }
            let value = try RedisURL.decoded(pair[pair.index(after: equals)...], what: "query value")
            switch pair[..<equals] {
            case "sentinel_user": user = value.isEmpty ? nil : value
            case "sentinel_password":
                guard !value.isEmpty else { throw RedisURLError(reason: "sentinel_password is empty") }
                password = value
            default:
                throw RedisURLError(reason: "unknown query parameter \(pair[..<equals]) (sentinel_user, sentinel_password)")
            }
        }
        if user != nil && password == nil { throw RedisURLError(reason: "sentinel_user needs sentinel_password") }
        return (user, password)
    }

    public var description: String {
        var text = "redis+sentinel://"
        if password != nil { text += "\(user ?? ""):***@" }
        text += sentinels.map { ($0.host.contains(":") ? "[\($0.host)]" : $0.host) + ":\($0.port)" }.joined(separator: ",")
        text += "/\(masterName)"
        if database != 0 { text += "/\(database)" }
        if let first = sentinels.first, first.password != nil {
            text += "?" + (first.user.map { "sentinel_user=\($0)&" } ?? "") + "sentinel_password=***"
        }
        return text
    }
}

/// Which Redis a gateway uses: one server (`redis://`), the master a set of
/// sentinels names (`redis+sentinel://`), followed through failovers, or a Redis
/// Cluster reached through seed nodes (`redis+cluster://`).
public enum RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    case server(RedisURL)
    case sentinel(RedisSentinelURL)
    case cluster(RedisClusterURL)

    /// The database the URL names (`/db`; 0 on Redis Cluster, which has no other).
    public var database: Int {
        switch self {
        case .server(let url): url.database
        case .sentinel(let url): url.database
        case .cluster: 0
        }
    }

    /// Parses any of the forms, by its scheme.
    /// - Throws: `RedisURLError` with a one-line reason.
    public init(parsing text: String) throws(RedisURLError) {
        if String(text.prefix(17)).lowercased() == "redis+sentinel://" {
            self = .sentinel(try RedisSentinelURL(parsing: text))
        } else if RedisClusterURL.hasScheme(text) {
            self = .cluster(try RedisClusterURL(parsing: text))
        } else {
            self = .server(try RedisURL(parsing: text))
        }
    }

    public var description: String {
        switch self {
        case .server(let url): url.description
        case .sentinel(let url): url.description
        case .cluster(let url): url.description
        }
    }
}
