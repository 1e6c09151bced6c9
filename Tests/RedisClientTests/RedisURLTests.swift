import Testing
import RedisClient

/// `redis://[[user]:password@]host[:port][/db]`: what parses, and the exact reason when not.
struct RedisURLTests {
    /// A bare host gets port 6379, database 0 and no credentials.
    @Test func hostAloneTakesTheDefaults() throws {
        let url = try RedisURL(parsing: "redis://cache.internal")
        #expect(url == RedisURL(host: "cache.internal", port: 6379, user: nil, password: nil, database: 0))
        #expect(url.description == "redis://cache.internal:6379")
    }

    /// Every part given is read: user, password, host, port and database.
    @Test func everyPartIsRead() throws {
        let url = try RedisURL(parsing: "redis://alice:s3cret@10.0.0.5:6380/2")
        #expect(url == RedisURL(host: "10.0.0.5", port: 6380, user: "alice", password: "s3cret", database: 2))
    }

    /// A password without a user (`:password@`) leaves the user nil.
    @Test func passwordWithoutUser() throws {
        let url = try RedisURL(parsing: "redis://:pa55@localhost/0")
        #expect(url.user == nil)
        #expect(url.password == "pa55")
        #expect(url.host == "localhost")
    }

    /// User and password are percent-decoded; an unencoded '@' in the password still parses (the last '@' ends it).
    @Test func credentialsArePercentDecoded() throws {
        let url = try RedisURL(parsing: "redis://us%3Aer:p%40ss%2Fw%20rd@h")
        #expect(url.user == "us:er")
        #expect(url.password == "p@ss/w rd")
        #expect(try RedisURL(parsing: "redis://:a@b@h").password == "a@b")
    }

    /// An IPv6 address in brackets is stored without them and printed with them.
    @Test func bracketedIPv6() throws {
        let url = try RedisURL(parsing: "redis://[::1]:7000/3")
        #expect(url.host == "::1")
        #expect(url.port == 7000)
        #expect(url.database == 3)
        #expect(url.description == "redis://[::1]:7000/3")
        #expect(try RedisURL(parsing: "redis://[fe80::1]").port == 6379)
    }

    /// The description hides the password and keeps the user.
    @Test func descriptionHidesThePassword() throws {
        #expect(try RedisURL(parsing: "redis://bob:hunter2@h:1/4").description == "redis://bob:***@h:1/4")
        #expect(try RedisURL(parsing: "redis://:hunter2@h").description == "redis://:***@h:6379")
    }

    /// A trailing slash is database 0; the scheme is case-insensitive.
    @Test func trailingSlashAndSchemeCase() throws {
        #expect(try RedisURL(parsing: "redis://h/").database == 0)
        #expect(try RedisURL(parsing: "REDIS://h:1").port == 1)
    }

    /// Each malformed URL is refused with its own one-line reason.
    @Test(arguments: [
        ("http://h", "scheme must be redis://"),
        ("rediss://h", "scheme must be redis://"),
        ("h:6379", "scheme must be redis://"),
        ("redis://", "host is missing"),
        ("redis://:pw@", "host is missing"),
        ("redis://:6379", "host is missing"),
        ("redis://h:0", "port must be a number from 1 to 65535"),
        ("redis://h:65536", "port must be a number from 1 to 65535"),
        ("redis://h:", "port must be a number from 1 to 65535"),
        ("redis://h:12a", "port must be a number from 1 to 65535"),
        ("redis://h/x", "database must be a number from 0 to 999999999"),
        ("redis://h/-1", "database must be a number from 0 to 999999999"),
        ("redis://h/1/2", "database must be a number from 0 to 999999999"),
        ("redis://h/1234567890", "database must be a number from 0 to 999999999"),
        ("redis://pw@h", "credentials must be [user]:password before '@'"),
        ("redis://u:@h", "password is empty"),
        ("redis://u:p%zz@h", "password has an invalid percent-encoding"),
        ("redis://u%2:p@h", "user has an invalid percent-encoding"),
        ("redis://[::1", "IPv6 address must end with ']'"),
        ("redis://[::1]x", "unexpected text after ']'"),
        ("redis://[nope]", "invalid IPv6 address"),
        ("redis://h st", "host may hold only letters, digits, '.', '-' and '_'"),
        ("redis://h?db=1", "query and fragment are not supported"),
    ])
    func refusesWithReason(text: String, reason: String) {
        #expect(throws: RedisURLError(reason: reason)) { try RedisURL(parsing: text) }
    }
}
