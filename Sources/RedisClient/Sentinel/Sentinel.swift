/// Talking to Redis Sentinel: which node is the master now, and what a node says
/// it is (`ROLE`).
///
/// Promises: `masterAddress` asks the sentinels one after another (starting with
/// the one that answered last time) and returns the first answer naming a master,
/// within `timeout` per sentinel; it never returns an address no sentinel gave.
public enum Sentinel {
    /// The master's address as the first answering sentinel gives it, and the index of that sentinel.
    /// - Throws: `.unreachable(reason)` when no sentinel names a master (each one's reason joined).
    public static func masterAddress(_ url: RedisSentinelURL, startingAt start: Int,
                                     timeout: Duration) async throws(RedisError) -> (master: RedisURL, sentinel: Int) {
        var reasons: [String] = []
        for offset in 0..<url.sentinels.count {
            let index = (start + offset) % url.sentinels.count
            let sentinel = url.sentinels[index]
            do throws(RedisError) {
                let connection = try await RedisConnection.connect(to: sentinel, timeout: timeout)
                defer { connection.close() }
                let reply = try await connection.command(["SENTINEL", "get-master-addr-by-name", url.masterName],
                                                         timeout: timeout)
                guard let parts = reply.array, parts.count == 2, let host = parts[0].string,
                      let port = parts[1].string.flatMap({ Int($0) }), (1...65535).contains(port) else {
                    reasons.append("\(sentinel.host):\(sentinel.port) knows no master \(url.masterName)")
                    continue
                }
                return (url.master(host: host, port: port), index)
            } catch {
                reasons.append("\(sentinel.host):\(sentinel.port): \(error)")
            }
        }
        throw .unreachable("no sentinel names a master \(url.masterName) (\(reasons.joined(separator: "; ")))")
    }

    /// The node's role from `ROLE`: `master`, `slave` (a replica) or `sentinel`.
    public static func role(of connection: RedisConnection, timeout: Duration) async throws(RedisError) -> String {
        let reply = try await connection.command(["ROLE"], timeout: timeout)
        guard let role = reply.array?.first?.string else { throw .protocolError("unexpected ROLE reply") }
        return role
    }

    /// The channel sentinels announce a failover's end on.
    public static let switchMasterChannel: [UInt8] = Array("+switch-master".utf8)
}

/// A `+switch-master` announcement: `<master-name> <old-ip> <old-port> <new-ip> <new-port>`.
public struct SwitchMaster: Sendable, Equatable {
    public let masterName: String
    public let host: String
    public let port: Int

    /// Nil for a payload of another form.
    public init?(payload: [UInt8]) {
        let parts = String(decoding: payload, as: UTF8.self).split(separator: " ")
        guard parts.count == 5, let port = Int(parts[4]), (1...65535).contains(port) else { return nil }
        masterName = String(parts[0])
        host = String(parts[3])
        self.port = port
    }
}
