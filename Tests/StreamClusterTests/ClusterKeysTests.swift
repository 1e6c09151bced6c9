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
            for database in [0, 3] {
                let keys = ClusterKeys(topic: topic)
                var written = RedisArguments()
                ClusterKeys.appendPublishKeys(topic: topic, channel: channel, to: &written)
                ClusterKeys.appendChannel(topic: topic, sharded: sharded, database: database, to: &written)
                var named = RedisArguments([keys.ids, keys.state, keys.events, keys.counts(channel)])
                named.append(keys.channel(sharded: sharded, database: database))
                #expect(written == named)
                #expect(keys.ids == "sse:{\(topic)}:id" && keys.counts(channel) == "sse:{\(topic)}:n:\(channel.rawValue)")
                #expect(ClusterKeys.topic(ofChannel: keys.channel(sharded: sharded, database: database), database: database) == topic)
            }
        }
    }

    /// Pub/sub is the whole server's: a cluster on database 3 names its channels apart
    /// from one on database 0 of the same server, and takes none of the other's for its own.
    @Test func channelsOfAnotherDatabaseAreNotATopics() {
        let keys = ClusterKeys(topic: "orders")
        #expect(keys.channel(database: 0) == Array("sse:t:orders".utf8))
        #expect(keys.channel(database: 3) == Array("sse:3:t:orders".utf8))
        #expect(ClusterKeys.topic(ofChannel: keys.channel(database: 0), database: 3) == nil)
        #expect(ClusterKeys.topic(ofChannel: keys.channel(database: 3), database: 0) == nil)
        #expect(ClusterKeys.topic(ofChannel: keys.channel(database: 3), database: 13) == nil)
    }
}
