import HTTPCore

extension SlotMap {
    /// Reads the slot map from the first of `seeds` that gives one: each is tried in
    /// turn (connect, `CLUSTER SHARDS`, or `CLUSTER SLOTS` where SHARDS is unknown),
    /// each within `timeout`, the connection closed after. A seed that is down, not
    /// in cluster mode, or whose reply does not parse is skipped.
    ///
    /// Pass the configured seeds and the nodes of the last map (`nodes`, as URLs
    /// through `ClusterAddress.url(from:)`) so a refresh survives the seeds' loss.
    /// - Throws: `.unreachable` naming every seed's reason when none gave a map.
    public static func fetch(from seeds: [RedisURL], timeout: Duration,
                             loop: EventLoop = .shared) async throws(RedisError) -> SlotMap {
        var reasons: [String] = []
        var tried = Set<String>()
        for seed in seeds where tried.insert("\(seed.host):\(seed.port)").inserted {
            do throws(RedisError) {
                let connection = try await RedisConnection.connect(to: seed, timeout: timeout, loop: loop)
                defer { connection.close() }
                return try await fetch(on: connection, host: seed.host, timeout: timeout)
            } catch {
                reasons.append("\(seed.host):\(seed.port): \(error)")
            }
        }
        if reasons.isEmpty { throw .unreachable("no Redis Cluster node to ask for the slot map") }
        throw .unreachable("no Redis Cluster node gave its slot map (\(reasons.joined(separator: "; ")))")
    }

    /// Reads the slot map on an open connection to a node whose host is `host`.
    /// - Throws: `.server` for a refusal (e.g. a node not in cluster mode),
    ///   `.protocolError` for a reply that is not a slot map (the connection is then
    ///   closed, as after any `.protocolError`), else as `command` does.
    public static func fetch(on connection: RedisConnection, host: String,
                             timeout: Duration) async throws(RedisError) -> SlotMap {
        do {
            let reply = try await connection.command(["CLUSTER", "SHARDS"], timeout: timeout)
            return try parseOrThrow(closing: connection) { () throws(SlotMapError) in try parse(shardsReply: reply, queriedHost: host) }
        } catch {
            // Before Redis 7: "ERR unknown subcommand 'SHARDS'…"; every version has SLOTS.
            guard case .server(let message) = error, message.lowercased().contains("unknown subcommand") else { throw error }
        }
        let reply = try await connection.command(["CLUSTER", "SLOTS"], timeout: timeout)
        return try parseOrThrow(closing: connection) { () throws(SlotMapError) in try parse(slotsReply: reply, queriedHost: host) }
    }

    private static func parseOrThrow(closing connection: RedisConnection,
                                     _ parse: () throws(SlotMapError) -> SlotMap) throws(RedisError) -> SlotMap {
        do {
            return try parse()
        } catch {
            connection.close()
            throw .protocolError(error.description)
        }
    }
}
