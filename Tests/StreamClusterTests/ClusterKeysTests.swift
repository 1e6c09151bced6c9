import RedisClient
import StreamHub
import Testing
@testable import StreamCluster

/// The publish script's keys, written piece by piece on every publish, are the names
/// every other command uses for the same topic.
struct ClusterKeysTests {
    @Test(arguments: [Channel.state, .events], [false, true])
    func publishKeysAreTheTopicsKeys(channel: Channel, sharded: Bool) {
        for topic in ["a", "scores/ké-1", String(repeating: "t", count: 200)] {
            let keys = ClusterKeys(topic: topic)
            var written = RedisArguments()
            ClusterKeys.appendPublishKeys(topic: topic, channel: channel, to: &written)
            ClusterKeys.appendChannel(topic: topic, sharded: sharded, to: &written)
            var named = RedisArguments([keys.ids, keys.state, keys.events, keys.counts(channel)])
            named.append(keys.channel(sharded: sharded))
            #expect(written == named)
            #expect(keys.ids == "sse:{\(topic)}:id" && keys.counts(channel) == "sse:{\(topic)}:n:\(channel.rawValue)")
            #expect(ClusterKeys.topic(ofChannel: keys.channel(sharded: sharded)) == topic)
        }
    }
}
