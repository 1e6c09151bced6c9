extension RedisConnection {
    /// Follows an `ASK` redirection: `ASKING` and then `arguments`, written together
    /// and matched as one call, so that no other caller's command on this pipelined
    /// connection comes between them (Redis grants `ASKING` to the next command only).
    /// Returns the command's reply.
    /// - Throws: as `command`; `.server` with the first error reply of the two (a
    ///   node not in cluster mode refuses `ASKING`: that refusal, the command's own
    ///   reply consumed too, the connection still usable).
    public nonisolated(nonsending) func commandAfterAsking(_ arguments: RedisArguments, timeout: Duration) async throws(RedisError) -> RedisValue {
        try await core.command(arguments, asking: true, timeout: timeout)
    }

    /// `commandAfterAsking` with byte arguments.
    public func commandAfterAsking(_ arguments: [[UInt8]], timeout: Duration) async throws(RedisError) -> RedisValue {
        try await core.command(RedisArguments(arguments), asking: true, timeout: timeout)
    }
}
