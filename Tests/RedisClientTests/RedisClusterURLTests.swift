import RedisClient
import Testing

/// `redis+cluster://` URLs: seeds with shared credentials, refusals with a reason.
struct RedisClusterURLTests {
    /// Several seeds, IPv6 and default ports, credentials on every seed, no password shown.
    @Test func seedsParse() throws {
        let url = try RedisClusterURL(parsing: "redis+cluster://app:p%40ss@10.0.0.1:7000,[::1]:7001,redis-3")
        #expect(url.seeds.map(\.host) == ["10.0.0.1", "::1", "redis-3"])
        #expect(url.seeds.map(\.port) == [7000, 7001, 6379])
        #expect(url.seeds.allSatisfy { $0.user == "app" && $0.password == "p@ss" && $0.database == 0 })
        #expect(url.description == "redis+cluster://app:***@10.0.0.1:7000,[::1]:7001,redis-3:6379")
        #expect(try RedisClusterURL(parsing: "REDIS+CLUSTER://h:1/0").seeds == [RedisURL(host: "h", port: 1)])
        #expect(RedisClusterURL.hasScheme("redis+cluster://x") && !RedisClusterURL.hasScheme("redis://x"))
    }

    /// Each malformed URL is refused with its own reason.
    @Test func malformedURLsAreRefused() {
        let cases = [
            "redis://h:1": "scheme must be redis+cluster://",
            "redis+cluster://": "an empty node in the list of seeds",
            "redis+cluster://u:p@": "an empty node in the list of seeds",
            "redis+cluster://h:1,,h:2": "an empty node in the list of seeds",
            "redis+cluster://h:1,h:1": "seed h:1 is given twice",
            "redis+cluster://h:1/3": "a Redis Cluster has only database 0",
            "redis+cluster://h:1?x=1": "query and fragment are not supported",
            "redis+cluster://h:99999": "port must be a number from 1 to 65535",
        ]
        for (text, reason) in cases {
            #expect(throws: RedisURLError(reason: reason), "\(text)") { try RedisClusterURL(parsing: text) }
        }
    }
}
