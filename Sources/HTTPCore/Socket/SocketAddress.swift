import Glibc

/// An IPv4 or IPv6 address and port, ready to hand to `bind` or `connect`.
public struct SocketAddress: Sendable, Equatable, CustomStringConvertible {
    private enum Storage: Equatable {
        case v4(sockaddr_in)
        case v6(sockaddr_in6)

        static func == (lhs: Storage, rhs: Storage) -> Bool {
            switch (lhs, rhs) {
            case (.v4(var a), .v4(var b)): return memcmp(&a, &b, MemoryLayout<sockaddr_in>.size) == 0
            case (.v6(var a), .v6(var b)): return memcmp(&a, &b, MemoryLayout<sockaddr_in6>.size) == 0
            default: return false
            }
        }
    }

    private let storage: Storage

    /// A numeric address (`127.0.0.1`, `::1`, `0.0.0.0`); nil if `host` is not one.
    public init?(numericHost host: String, port: Int) {
        guard (0...65535).contains(port) else { return nil }
        var v4 = sockaddr_in()
        if inet_pton(AF_INET, host, &v4.sin_addr) == 1 {
            v4.sin_family = sa_family_t(AF_INET)
            v4.sin_port = in_port_t(UInt16(port).bigEndian)
            storage = .v4(v4)
            return
        }
        var v6 = sockaddr_in6()
        if inet_pton(AF_INET6, host, &v6.sin6_addr) == 1 {
            v6.sin6_family = sa_family_t(AF_INET6)
            v6.sin6_port = in_port_t(UInt16(port).bigEndian)
            storage = .v6(v6)
            return
        }
        return nil
    }

    /// A numeric host as is, or a name resolved through the system resolver
    /// (blocking: call it at start-up, never per request). `localhost` resolves
    /// to `127.0.0.1` without asking.
    public static func resolve(host: String, port: Int) -> SocketAddress? {
        if let numeric = SocketAddress(numericHost: host, port: port) { return numeric }
        if host == "localhost" { return SocketAddress(numericHost: "127.0.0.1", port: port) }
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var result: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &result) == 0, let first = result else { return nil }
        defer { freeaddrinfo(result) }
        var storage = sockaddr_storage()
        memcpy(&storage, first.pointee.ai_addr, Int(first.pointee.ai_addrlen))
        guard var address = SocketAddress(storage: storage) else { return nil }
        address = address.with(port: port)
        return address
    }

    init?(storage: sockaddr_storage) {
        var storage = storage
        switch Int32(storage.ss_family) {
        case AF_INET:
            self.storage = .v4(withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) })
        case AF_INET6:
            self.storage = .v6(withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) })
        default:
            return nil
        }
    }

    private func with(port: Int) -> SocketAddress {
        var copy = self
        switch storage {
        case .v4(var a): a.sin_port = in_port_t(UInt16(port).bigEndian); copy = SocketAddress(raw: .v4(a))
        case .v6(var a): a.sin6_port = in_port_t(UInt16(port).bigEndian); copy = SocketAddress(raw: .v6(a))
        }
        return copy
    }

    private init(raw: Storage) { storage = raw }

    /// `AF_INET` or `AF_INET6`.
    public var family: Int32 {
        switch storage {
        case .v4: return AF_INET
        case .v6: return AF_INET6
        }
    }

    public var port: Int {
        switch storage {
        case .v4(let a): return Int(UInt16(bigEndian: a.sin_port))
        case .v6(let a): return Int(UInt16(bigEndian: a.sin6_port))
        }
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN) + 1)
        switch storage {
        case .v4(var a):
            inet_ntop(AF_INET, &a.sin_addr, &buffer, socklen_t(buffer.count))
            return "\(Self.text(buffer)):\(port)"
        case .v6(var a):
            inet_ntop(AF_INET6, &a.sin6_addr, &buffer, socklen_t(buffer.count))
            return "[\(Self.text(buffer))]:\(port)"
        }
    }

    private static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    func withSockaddr<R, E: Error>(_ body: (UnsafePointer<sockaddr>, socklen_t) throws(E) -> R) throws(E) -> R {
        switch storage {
        case .v4(var a):
            return try withUnsafePointer(to: &a) { pointer throws(E) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa throws(E) in
                    try body(sa, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        case .v6(var a):
            return try withUnsafePointer(to: &a) { pointer throws(E) in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa throws(E) in
                    try body(sa, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        }
    }
}
