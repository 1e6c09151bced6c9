import Testing
import RedisClient

/// `redis+sentinel://[[user]:password@]host:port[,host:port…]/<master-name>[/db]?sentinel_…`:
/// what parses, what each part becomes, and the exact reason when it does not.
struct RedisSentinelURLTests {
    /// Every part is read: the master's credentials and database, each sentinel (26379
    /// when its port is absent, IPv6 in brackets), and the sentinels' own credentials.
    @Test func everyPartIsRead() throws {
        let url = try RedisSentinelURL(parsing:
            "redis+sentinel://app:p%40ss@10.0.0.1:26380,sentinel-2,[::1]:5000/my-master/4?sentinel_user=watch&sentinel_password=s%26cret")
        #expect(url.masterName == "my-master")
        #expect(url.user == "app" && url.password == "p@ss" && url.database == 4)
        #expect(url.sentinels.map(\.host) == ["10.0.0.1", "sentinel-2", "::1"])
        #expect(url.sentinels.map(\.port) == [26380, 26379, 5000])
        #expect(url.sentinels.allSatisfy { $0.user == "watch" && $0.password == "s&cret" && $0.database == 0 })
        #expect(url.master(host: "10.0.0.9", port: 6379)
            == RedisURL(host: "10.0.0.9", port: 6379, user: "app", password: "p@ss", database: 4))
        #expect(!url.description.contains("p@ss") && !url.description.contains("cret"))
    }

    /// Without credentials or query, nobody logs in; the endpoint picks the form by scheme.
    @Test func theEndpointPicksByScheme() throws {
        let sentinel = try RedisEndpoint(parsing: "REDIS+SENTINEL://127.0.0.1:26379/streams")
        #expect(sentinel == .sentinel(RedisSentinelURL(sentinels: [RedisURL(host: "127.0.0.1", port: 26379)],
                                                       masterName: "streams")))
        #expect(try RedisEndpoint(parsing: "redis://h:1") == .server(RedisURL(host: "h", port: 1)))
    }

    @Test(arguments: [
        ("redis+sentinel://h:26379", "the master's name is missing: …/<master-name>"),
        ("redis+sentinel://h:26379/", "the master's name is missing: …/<master-name>"),
        ("redis+sentinel://h:26379/m/x", "database must be a number from 0 to 999999999"),
        ("redis+sentinel://h:26379/m/1/2", "the path must be /<master-name>[/db]"),
        ("redis+sentinel://h:26379,/m", "a sentinel's host is missing"),
        ("redis+sentinel://h:0/m", "port must be a number from 1 to 65535"),
        ("redis+sentinel://h/m?sentinel_pass=x", "unknown query parameter sentinel_pass (sentinel_user, sentinel_password)"),
        ("redis+sentinel://h/m?sentinel_user=u", "sentinel_user needs sentinel_password"),
        ("redis+sentinel://h/m?sentinel_password=", "sentinel_password is empty"),
        ("redis+sentinel://h/m#f", "a fragment is not supported"),
        ("redis://h/m", "scheme must be redis+sentinel://"),
    ])
    func refusesWithReason(text: String, reason: String) {
        #expect(throws: RedisURLError(reason: reason)) { try RedisSentinelURL(parsing: text) }
    }

    /// A `+switch-master` message names the master and its new address; other forms are ignored.
    @Test func switchMasterAnnouncements() {
        let message = SwitchMaster(payload: Array("streams 127.0.0.1 6379 127.0.0.1 6380".utf8))
        #expect(message?.masterName == "streams" && message?.host == "127.0.0.1" && message?.port == 6380)
        #expect(SwitchMaster(payload: Array("streams 127.0.0.1 6379".utf8)) == nil)
        #expect(SwitchMaster(payload: Array("streams a 1 b 0".utf8)) == nil)
    }
}
