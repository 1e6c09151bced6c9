/// Where a Redis Cluster node listens, as the cluster announces it (in the slot
/// map, or in a `MOVED`/`ASK` redirection).
///
/// Promises: `host` is what the cluster gave (an IPv4/IPv6 address or a name,
/// IPv6 without brackets), `port` in 1...65535.
public struct ClusterAddress: Sendable, Hashable, CustomStringConvertible {
    public let host: String
    public let port: Int

    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// `host:port`, `[v6]:port`, or `:port` (the host is `defaultHost`: Redis leaves
    /// it out when the node does not know its own endpoint). Nil if the port is not
    /// a number in 1...65535 or the host is missing with no default.
    public init?(parsing text: Substring, defaultHost: String?) {
        guard let colon = text.lastIndex(of: ":") else { return nil }
        var host = String(text[..<colon])
        if host.hasPrefix("[") && host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.isEmpty || host == "?" {
            guard let defaultHost else { return nil }
            host = defaultHost
        }
        let portText = text[text.index(after: colon)...]
        guard !portText.isEmpty, portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let port = Int(portText), (1...65535).contains(port) else { return nil }
        self.init(host: host, port: port)
    }

    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// `seed` (its credentials; database 0, the only one a cluster has) aimed at this node.
    public func url(from seed: RedisURL) -> RedisURL {
        RedisURL(host: host, port: port, user: seed.user, password: seed.password, database: 0)
    }
}

/// One node of a Redis Cluster as the slot map names it.
///
/// Promises: `id` is the node's run-independent cluster id (40 hex digits as Redis
/// gives it; empty only when the cluster did not say, e.g. an old `CLUSTER SLOTS`).
public struct ClusterNode: Sendable, Hashable, CustomStringConvertible {
    public let id: String
    public let address: ClusterAddress

    public init(id: String, address: ClusterAddress) {
        self.id = id
        self.address = address
    }

    public var description: String { id.isEmpty ? address.description : "\(address) (\(id.prefix(8)))" }
}
