import RedisClient
import StreamHub

/// Publishing: one script on the topic's shard assigns the id, stores the value and
/// announces it; with `minReplicas`, a `WAIT` on the same connection right after it
/// confirms that enough replicas hold it before the publish is acknowledged.
///
/// On Redis Cluster a refusal of the node is followed as the cluster says: `MOVED` →
/// the slot map read again and the publish tried once more on the new owner; `ASK` →
/// the script sent after `ASKING` to the node importing the slot (no refresh);
/// `TRYAGAIN` (a multi-key script while its slot migrates) → tried again every 25 ms
/// until the command timeout; `CLUSTERDOWN`/`READONLY` → the map is read again and
/// the publish answered 503 (with `Retry-After`).
extension ClusterEngine {
    public func publish(topic: String, channel: Channel, data: String, event: String?) async throws(PublishError) -> PublishResult {
        guard !isShutdown else { throw .shutdown }
        // The new id is above the last this gateway holds: ids never go backwards for its subscribers.
        let held = await hub.lastIDs(topic: topic)
        let above = channel == .state ? held.state : held.events
        let keys = ClusterKeys(topic: topic)
        let deadline = ContinuousClock.now + configuration.commandTimeout
        var moved = false
        var asking: ClusterAddress?
        while true {
            guard !isShutdown else { throw .shutdown }
            let target = asking.flatMap { address in
                shards.indices.first { shards[$0].clusterMaster?.address == address && !shards[$0].retired }
            } ?? (asking == nil ? routing.shard(of: topic) : nil)
            guard let index = target else {
                if asking == nil { requestMapRefresh() }
                throw .unavailable(reason: asking.map { "the Redis Cluster node \($0) importing the topic's slot is not linked" }
                                   ?? "no Redis Cluster master serves the topic's slot now (a failover or reshard); retry in a moment")
            }
            guard let link = link(shard: index), readiness.isReady(shard: index), link.publisher.isOpen else {
                throw .unavailable(reason: readiness.reason(shard: index) ?? "the connection to the cluster's Redis was lost")
            }
            let shardKeys = shards[index].keys
            let arguments: [[UInt8]] = [
                Array(channel.rawValue.utf8), Array(data.utf8), Array((event ?? "").utf8), Array(String(above).utf8),
                Array(String(configuration.hub.replayCount).utf8),
                Array(String(configuration.replayMaxAgeMilliseconds).utf8),
                keys.channel(sharded: routing.isCluster), Array(shardKeys.gatewayPrefix.utf8),
                Array(configuration.gatewayID.utf8), Array(shardKeys.publishPause.utf8),
                Array((routing.isCluster ? "SPUBLISH" : "PUBLISH").utf8),
            ]
            // With --redis-min-replicas: one script + WAIT at a time per shard (a WAIT
            // blocks its connection: others pipelined behind it would wait out its timeout).
            if configuration.minReplicas > 0 {
                guard await takeReplicaTurn(shard: index, until: deadline) else {
                    throw .unavailable(reason: ContinuousClock.now >= deadline
                        ? "waited for the publishes before it on the shard (--redis-min-replicas: one WAIT at a time) "
                          + "past the command timeout (\(configuration.commandTimeout)); retry in a moment"
                        : replicasShortText(shard: index))
                }
            }
            var replicasShort: Int?
            defer { if configuration.minReplicas > 0 { releaseReplicaTurn(shard: index, short: replicasShort) } }
            let reply: RedisValue
            do {
                reply = try await runScript("publish", ClusterScripts.publish, link: link, on: link.publisher,
                                            keys: [keys.ids, keys.state, keys.events, keys.counts(channel)],
                                            arguments: arguments, asking: asking != nil)
            } catch {
                if routing.isCluster, let redirection = ClusterRedirection(error) {
                    switch redirection.kind {
                    case .moved where !moved:
                        moved = true
                        asking = nil
                        guard await refreshMapNow(until: deadline) else {
                            throw .unavailable(reason: "the topic's slot moved to another Redis Cluster master, and the "
                                               + "new slot map was not read within the command timeout; retry in a moment")
                        }
                        continue
                    case .ask where asking == nil:
                        asking = redirection.address
                        continue
                    default:
                        break
                    }
                }
                if routing.isCluster, let refusal = ClusterRefusal(error) {
                    switch refusal {
                    case .tryAgain where ContinuousClock.now + .milliseconds(25) < deadline:
                        try? await Task.sleep(for: .milliseconds(25))
                        asking = nil
                        continue
                    case .tryAgain:
                        throw .unavailable(reason: "the topic's slot is moving between Redis Cluster masters; retry in a moment")
                    case .clusterDown, .notMaster:
                        requestMapRefresh()
                    }
                }
                throw .unavailable(reason: refusal(error, link: link, shard: index))
            }
            guard let parts = reply.array, parts.count == 2, let id = parts[0].integer, id > 0,
                  let subscribers = parts[1].integer else {
                throw .unavailable(reason: "Redis gave an unexpected reply to the publish script")
            }
            if configuration.minReplicas > 0 {
                let acknowledged = try await replicasHolding(link, shard: index)
                guard acknowledged >= configuration.minReplicas else {
                    replicasShort = acknowledged
                    throw .unavailable(reason: "stored on the Redis master but only \(acknowledged) of the \(configuration.minReplicas) "
                                       + "replicas required (--redis-min-replicas) confirmed it within "
                                       + "\(configuration.minReplicasTimeout); it may be delivered, and may be lost if the master fails")
                }
            }
            counters.published(channel)
            // Other gateways' subscribers as they last wrote them (at most a second old),
            // this gateway's own as they are now.
            let local = await hub.subscriberCount(topic: topic, channel: channel)
            return PublishResult(id: UInt64(id), subscribers: Int(max(0, subscribers)) + local)
        }
    }

    /// `WAIT minReplicas` on the publishing connection: it covers every write made on
    /// it so far, this publish's included. Returns how many replicas confirmed.
    private func replicasHolding(_ link: RedisLink, shard index: Int) async throws(PublishError) -> Int {
        let (seconds, attoseconds) = configuration.minReplicasTimeout.components
        let milliseconds = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        do {
            let reply = try await link.publisher.command(["WAIT", String(configuration.minReplicas), String(milliseconds)],
                                                         timeout: configuration.commandTimeout + configuration.minReplicasTimeout)
            return Int(reply.integer ?? 0)
        } catch {
            throw .unavailable(reason: refusal(error, link: link, shard: index))
        }
    }

    /// Why a publish's command failed, for its 503 (this refusal's own reason: another
    /// publish refused meanwhile has its own); a master turned replica (`READONLY`) is
    /// looked for again, a pause for restoring ids is noted for `/readyz`.
    private func refusal(_ error: RedisError, link: RedisLink, shard index: Int) -> String {
        switch error {
        case .server(let message) where message.hasPrefix("READONLY"):
            linkLost(link, shard: index, because: .noMaster("the node in use became a replica"))
            return "the Redis node answered READONLY: it is a replica now; finding the master again"
        case .server(let message) where message.hasPrefix("REFLOOR"):
            readiness.pause(shard: index, until: .now + .milliseconds(250))
            return "the cluster's Redis may have lost data: the gateways restore the ids; retry in a moment"
        case .server(let message) where message.hasPrefix("CLUSTERDOWN"):
            return "the Redis Cluster refused the publish (\(message)): a master is lost and not yet replaced; retry in a moment"
        case .server(let message):
            return "Redis refused the publish: \(message)"
        case .timedOut:
            return "the cluster's Redis did not answer within \(configuration.commandTimeout)"
        case .closed, .unreachable, .protocolError:
            return "the connection to the cluster's Redis was lost"
        case .cancelled:
            return "the publish was cancelled before Redis answered"
        }
    }
}
