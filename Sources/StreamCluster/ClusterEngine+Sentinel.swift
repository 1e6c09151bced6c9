import RedisClient

/// Sentinel mode: a subscription to `+switch-master` on one sentinel at a time
/// (the next one when it goes silent or away), so a failover is followed the moment
/// Sentinel announces it rather than when the old master's connection times out.
extension ClusterEngine {
    /// Runs until shutdown: subscribed on a sentinel, PINGed every second.
    func watchSentinels(_ url: RedisSentinelURL) async {
        var index = 0
        var failures = 0
        while !isShutdown, !Task.isCancelled {
            let sentinel = url.sentinels[index % url.sentinels.count]
            index += 1
            do throws(RedisError) {
                let subscriber = try await RedisSubscriber.connect(to: sentinel, timeout: configuration.connectTimeout) { [weak self] message in
                    await self?.sentinelAnnounced(message, masterName: url.masterName)
                }
                defer { subscriber.close() }
                try await subscriber.subscribe([Sentinel.switchMasterChannel], timeout: configuration.commandTimeout)
                failures = 0
                while !isShutdown {
                    try? await configuration.clock.sleep(for: .seconds(1), tolerance: nil)
                    guard !isShutdown, !Task.isCancelled else { return }
                    try await subscriber.ping(timeout: configuration.commandTimeout)
                }
            } catch {
                failures += 1
                if failures == url.sentinels.count {
                    configuration.log("redis: no sentinel takes a +switch-master subscription (\(error)); trying again")
                }
                // Once round every sentinel, wait a little before the next round.
                if failures % url.sentinels.count == 0 {
                    try? await configuration.clock.sleep(for: .milliseconds(500), tolerance: nil)
                }
            }
        }
    }

    /// `+switch-master` for this gateway's master: the link in use (if any) goes, and
    /// the sentinels are asked again at once.
    private func sentinelAnnounced(_ message: RedisMessage, masterName: String) {
        guard !isShutdown, message.channel == Sentinel.switchMasterChannel,
              let announcement = SwitchMaster(payload: message.payload), announcement.masterName == masterName else { return }
        configuration.log("redis: Sentinel announced the master \(masterName) at \(announcement.host):\(announcement.port)")
        requestRelink(shard: 0)
        if let link = link(shard: 0),
           shards[0].phase.lastMaster.map({ $0.host != announcement.host || $0.port != announcement.port }) ?? true {
            linkLost(link, shard: 0, because: .noMaster("Sentinel moved the master to \(announcement.host):\(announcement.port)"))
        }
    }
}
