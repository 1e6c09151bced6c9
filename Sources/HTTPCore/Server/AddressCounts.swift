import Glibc
import Locking

/// Open connections per client address, for `maxConnectionsPerAddress`.
///
/// Promises: `admit` and `release` are balanced by the server (one `release` per
/// admitted connection, when its task ends); an address with no open connection
/// has no entry (the table holds only addresses with connections). Addresses are
/// compared without the port; an IPv4-mapped IPv6 address (`::ffff:127.0.0.2`, what
/// a dual-stack listener sees of an IPv4 client) counts as its IPv4 address.
final class AddressCounts: Sendable {
    private let counts = Locked<[[UInt8]: Int]>([:])

    /// Counts a new connection from `address` unless it already has `limit` open.
    func admit(_ address: [UInt8], limit: Int) -> Bool {
        counts.withLock { counts in
            let open = counts[address, default: 0]
            guard open < limit else { return false }
            counts[address] = open + 1
            return true
        }
    }

    /// One connection from `address` ended.
    func release(_ address: [UInt8]) {
        counts.withLock { counts in
            guard let open = counts[address] else { return }
            counts[address] = open > 1 ? open - 1 : nil
        }
    }

    /// Open connections from `address` (for tests).
    func open(_ address: [UInt8]) -> Int {
        counts.withLock { $0[address, default: 0] }
    }

    /// The client's address of a connected socket, without its port: 4 bytes (IPv4,
    /// IPv4-mapped IPv6 included) or 16 (IPv6); nil if the kernel does not say.
    static func peerAddress(of fd: Int32) -> [UInt8]? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let status = withUnsafeMutablePointer(to: &storage) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(fd, $0, &length) }
        }
        guard status == 0 else { return nil }
        switch Int32(storage.ss_family) {
        case AF_INET:
            var v4 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in.self) }
            return withUnsafeBytes(of: &v4.sin_addr) { Array($0) }
        case AF_INET6:
            var v6 = withUnsafeBytes(of: &storage) { $0.load(as: sockaddr_in6.self) }
            let bytes = withUnsafeBytes(of: &v6.sin6_addr) { Array($0) }
            let mappedPrefix: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF]
            return bytes.starts(with: mappedPrefix) ? Array(bytes[12...]) : bytes
        default:
            return nil
        }
    }
}
