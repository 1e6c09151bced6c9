import Glibc
import Testing
@testable import HTTPCore

/// The per-address table behind `maxConnectionsPerAddress`: admits up to the limit,
/// a release frees one slot, an address with nothing open leaves the table, and the
/// address read from a socket drops the port (an IPv4-mapped IPv6 peer counts as IPv4).
struct AddressCountsTests {
    @Test func admitsUpToTheLimitAndReleaseFreesASlot() {
        let counts = AddressCounts()
        let one: [UInt8] = [127, 0, 0, 1], two: [UInt8] = [127, 0, 0, 2]
        #expect(counts.admit(one, limit: 2) && counts.admit(one, limit: 2))
        #expect(!counts.admit(one, limit: 2), "a third from the same address")
        #expect(counts.admit(two, limit: 2), "another address is not affected")
        counts.release(one)
        #expect(counts.open(one) == 1)
        #expect(counts.admit(one, limit: 2))
        counts.release(one); counts.release(one); counts.release(one)  // one too many: harmless
        #expect(counts.open(one) == 0)
    }

    /// A real loopback connection from 127.0.0.2: the server side reads 4 bytes, port aside.
    @Test func peerAddressOfAnIPv4Socket() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener); close(client) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(listener, $0, length) } }
        #expect(bound == 0)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            getsockname(listener, $0, &length) } }
        #expect(listen(listener, 1) == 0)
        var source = sockaddr_in()
        source.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, "127.0.0.2", &source.sin_addr)
        _ = withUnsafePointer(to: &source) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            bind(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        let connected = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        #expect(connected == 0)
        let accepted = accept(listener, nil, nil)
        defer { close(accepted) }
        #expect(AddressCounts.peerAddress(of: accepted) == [127, 0, 0, 2])
    }
}
