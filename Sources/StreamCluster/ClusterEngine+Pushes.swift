import RedisClient
import StreamHub

/// What arrives on a shard's subscribed connection: the followed topics' messages,
/// this gateway's probe, and on Redis Cluster the end of a sharded subscription that
/// the cluster decided (`sunsubscribe`: its slot moved, or the node became a replica).
extension ClusterEngine {
    /// A push on shard `index`'s subscribed connection (in arrival order; the reader
    /// waits for this to return). Handled in place when the reader runs on the engine's
    /// loop (the Redis connections do): every message of one read then goes into the
    /// mirror in the reader's one job, and the loop's turn-end writes carry them all,
    /// each subscriber once, as a turn's publishes in memory mode; no hop per message.
    nonisolated(nonsending) func received(_ push: RedisPush, shard index: Int, generation: UInt64) async {
        await onEngine((push, index, generation)) { engine, value in
            switch value.0 {
            case .message(let message):
                engine.received(message, shard: value.1, generation: value.2)
            case .shardChannelUnsubscribed(let channel):
                engine.shardChannelEnded(channel, shard: value.1, generation: value.2)
            }
        }
    }

    /// A message from the subscribed connection.
    func received(_ message: RedisMessage, shard index: Int, generation: UInt64) {
        guard index < shards.count, generation == shards[index].generation, !isShutdown else { return }
        if message.channel == shards[index].keys.probeChannel(gateway: configuration.gatewayID) {
            shards[index].probesSeen = max(shards[index].probesSeen, UInt64(String(decoding: message.payload, as: UTF8.self)) ?? 0)
            readiness.probeReturned(shard: index, generation: generation)
            return
        }
        guard let topic = ClusterKeys.topic(ofChannel: message.channel, database: configuration.redis.database),
              followed[topic] != nil, topicShard[topic] == index, let decoded = ClusterMessage(payload: message.payload) else { return }
        switch followed[topic]!.received(decoded) {
        case .apply(let next):
            mirror(next, of: topic)
        case .sync:
            doorbellRinger.yield()
        case .none, .subscribe, .runSync, .live:
            break
        }
    }

    /// Applies a live topic's next message to the mirror (its subscribers readied, the
    /// writes at the loop's turn end), then this gateway's own publishes that waited
    /// for it (`AheadMessages`); fences it reached are resumed. Synchronous, so nothing
    /// else of the engine or its hub runs between the id's decision and its apply.
    func mirror(_ message: ClusterMessage, of topic: String) {
        var next: ClusterMessage? = message
        while let message = next {
            hub.assumeIsolatedUnchecked((message, topic)) { hub, value in
                _ = try? hub.apply(topic: value.1, channel: value.0.channel, data: value.0.data, event: value.0.event,
                                   id: value.0.id)
            }
            next = followed[topic]?.takeAhead()
        }
        fencesMayBeReached(topic)
    }

    /// Redis Cluster ended a sharded subscription (its slot moved, or the node became a
    /// replica): the map is read again, the topic subscribes where it says and syncs
    /// from the keys (what was published between the two owners' switch reached no
    /// subscriber, but it is in the keys). The probe's channel: the link starts over.
    func shardChannelEnded(_ channel: [UInt8], shard index: Int, generation: UInt64) {
        guard index < shards.count, generation == shards[index].generation, !isShutdown else { return }
        if channel == shards[index].keys.probeChannel(gateway: configuration.gatewayID) {
            requestMapRefresh()
            if let link = link(shard: index) {
                linkLost(link, shard: index, because: .unreachable("the node stopped serving this gateway's probe (its slot moved)"))
            }
            return
        }
        guard let topic = ClusterKeys.topic(ofChannel: channel, database: configuration.redis.database),
              followed[topic] != nil, topicShard[topic] == index else { return }
        resubscribe(topic)
        requestMapRefresh()
    }
}
