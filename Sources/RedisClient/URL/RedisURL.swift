import Glibc
import HTTPCore

/// Where a Redis server is and how to log in: parsed from
/// `redis://[[user]:password@]host[:port][/db]`.
///
/// Promises: a value that parsed names a host (a name, an IPv4 address, or an
/// IPv6 address without its brackets), a port in 1...65535 (6379 when absent)
/// and a database ≥ 0 (0 when absent); `user` and `password` are percent-decoded
/// and nil when absent. `description` never shows the password.
public struct RedisURL: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String?
    public var password: String?
    public var database: Int

    public static let defaultPort = 6379

    public init(host: String, port: Int = RedisURL.defaultPort, user: String? = nil, password: String? = nil,
                database: Int = 0) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// Parses `redis://[[user]:password@]host[:port][/db]`.
    /// - Throws: `RedisURLError` with a one-line reason.
    public init(parsing text: String) throws(RedisURLError) {
        let scheme = "redis://"
        guard text.utf8.count >= scheme.utf8.count,
              String(text.prefix(scheme.count)).lowercased() == scheme else {
            throw RedisURLError(reason: "scheme must be redis://")
        }
        var rest = Substring(text.dropFirst(scheme.count))
        if rest.contains("?") || rest.contains("#") {
            throw RedisURLError(reason: "query and fragment are not supported")
        }
        // The last '@' ends the credentials: an unencoded '@' or '/' in a password still parses.
        var user: String?
        var password: String?
        if let at = rest.lastIndex(of: "@") {
            (user, password) = try Self.credentials(rest[..<at])
            rest = rest[rest.index(after: at)...]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        let (host, port) = try Self.hostAndPort(rest)
        var database = 0
        if !path.isEmpty {
            guard path.utf8.count <= 9, path.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let number = Int(path) else {
                throw RedisURLError(reason: "database must be a number from 0 to 999999999")
            }
            database = number
        }
        self.init(host: host, port: port, user: user, password: password, database: database)
    }

    public var description: String {
        var text = "redis://"
        if password != nil { text += "\(user ?? ""):***@" }
        text += host.contains(":") ? "[\(host)]" : host
        text += ":\(port)"
        if database != 0 { text += "/\(database)" }
        return text
    }

    /// `[user]:password`, percent-decoded; an empty user is none.
    static func credentials(_ text: Substring) throws(RedisURLError) -> (String?, String?) {
        guard let colon = text.firstIndex(of: ":") else {
            throw RedisURLError(reason: "credentials must be [user]:password before '@'")
        }
        let user = try decoded(text[..<colon], what: "user")
        let password = try decoded(text[text.index(after: colon)...], what: "password")
        guard !password.isEmpty else { throw RedisURLError(reason: "password is empty") }
        return (user.isEmpty ? nil : user, password)
    }

    static func decoded(_ text: Substring, what: String) throws(RedisURLError) -> String {
        guard let bytes = PercentDecoding.decode(text), let string = String(validating: bytes, as: UTF8.self) else {
            throw RedisURLError(reason: "\(what) has an invalid percent-encoding")
        }
        return string
    }

    /// `host`, `host:port`, `[v6]` or `[v6]:port`.
    static func hostAndPort(_ text: Substring) throws(RedisURLError) -> (String, Int) {
        var host: Substring
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw RedisURLError(reason: "IPv6 address must end with ']'")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisURLError(reason: "unexpected text after ']'") }
                portText = after.dropFirst()
            }
            guard SocketAddress(numericHost: String(host), port: 0)?.family == AF_INET6 else {
                throw RedisURLError(reason: "invalid IPv6 address")
            }
        } else {
            host = text
            if let colon = text.firstIndex(of: ":") {
                host = text[..<colon]
                portText = text[text.index(after: colon)...]
            }
            guard host.utf8.allSatisfy(isHostByte) else {
                throw RedisURLError(reason: "host may hold only letters, digits, '.', '-' and '_'")
            }
        }
        guard !host.isEmpty else { throw RedisURLError(reason: "host is missing") }
        var port = RedisURL.defaultPort
        if let portText {
            guard portText.utf8.count <= 5, portText.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                  let number = Int(portText), (1...65535).contains(number) else {
                throw RedisURLError(reason: "port must be a number from 1 to 65535")
            }
            port = number
        }
        return (String(host), port)
    }

    private static func isHostByte(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"): return true
        default: return false
        }
    }
}

/// Why a Redis URL did not parse: one line, e.g. "scheme must be redis://".
public struct RedisURLError: Error, Sendable, Equatable, CustomStringConvertible {
    public let reason: String

    public init(reason: String) {
        self.reason = reason
    }

    public var description: String { "invalid Redis URL: \(reason)" }
}
