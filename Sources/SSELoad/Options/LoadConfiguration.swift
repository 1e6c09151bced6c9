import StreamHub

/// Everything one load run is told, already validated.
///
/// A value of this type promises that every field is within the range the
/// command line accepts (see `LoadCommandLine`); `LoadConfiguration()` holds
/// the documented defaults, and `--help` prints them from this same value.
struct LoadConfiguration: Sendable, Equatable {
    /// Where the gateways listen (plain HTTP only, for now): one URL, or one per
    /// node of a cluster (`--url` given several times). Never empty.
    var targets = [LoadTarget(host: "127.0.0.1", port: 8080, basePath: "")]
    /// Which of `targets` the publishers use.
    var publishTo = PublishTo.first
    /// SSE connections to hold, at most `maxSubscribers`.
    var subscribers = 1000
    /// Topics the subscribers are spread over (subscriber j is on topic j % topics).
    var topics = 10
    /// Which channel is subscribed to and published on.
    var channel = Channel.events
    /// Keep-alive publishing connections (0 holds the subscribers idle for the duration).
    var publishers = 4
    /// Publishes per second across all publishers; 0 publishes as fast as acks return.
    var rate: Double = 200
    /// Payload bytes of each publish (the header is never cut, so small sizes may grow).
    var size = 128
    /// Total publishes after which publishing stops early; nil means "until the duration ends".
    var publishLimit: Int? = nil
    /// How long publishers publish (or, with no publishers, how long subscribers are held).
    var duration: Duration = .seconds(10)
    /// Time over which the subscribers' connects are spread evenly.
    var ramp: Duration = .seconds(2)
    /// Time one subscriber has to connect and receive its response head.
    var connectTimeout: Duration = .seconds(10)
    /// Longest wait after publishing for deliveries still in flight (ends early once all arrived).
    var settle: Duration = .seconds(2)
    /// Topics are named `<topicPrefix>/<i>`.
    var topicPrefix = "load"
    /// One JSON line instead of the human summary.
    var json = false
    /// Each subscriber stops reading after this many deliveries until publishing
    /// ends, then reads again (a stalled reader); nil: never stalls.
    var stallAfter: Int? = nil

    /// The most subscribers one process may hold: the process has at most
    /// 20,000 descriptors, and publishers, the event loop and the runtime need some.
    static let maxSubscribers = 19_000
    /// The most publishers (their index is packed in 16 bits of a delivery tag).
    static let maxPublishers = 256
    /// The most URLs (`--url` given this many times at most).
    static let maxTargets = 64
    /// The most topics one run spreads over.
    static let maxTopics = 100_000

    /// Descriptors a run needs: one per connection plus a reserve for the
    /// event loop, standard streams and the runtime.
    var descriptorsNeeded: UInt64 { UInt64(subscribers + publishers + 64) }

    /// The first URL; setting it leaves that one URL alone in `targets`.
    var target: LoadTarget {
        get { targets[0] }
        set { targets = [newValue] }
    }

    /// The URL (index in `targets`) subscriber `index` connects to: round-robin
    /// within each topic, so with one topic subscriber j is on URL j % N, and with
    /// many topics every topic has subscribers on every URL (a plain j % N would put
    /// all of topic 0 on URL 0 when N divides the number of topics).
    func target(ofSubscriber index: Int) -> Int {
        (index % topics + index / topics) % targets.count
    }

    /// The URL (index in `targets`) publisher `index` publishes to.
    func target(ofPublisher index: Int) -> Int {
        publishTo == .all ? index % targets.count : 0
    }

    /// The topic name of topic `index`.
    func topicName(_ index: Int) -> String { "\(topicPrefix)/\(index)" }

    /// The topic subscriber `index` subscribes to.
    func topic(ofSubscriber index: Int) -> Int { index % topics }

    /// How many publishes publisher `index` makes at most (its share of `publishLimit`).
    func quota(ofPublisher index: Int) -> Int? {
        guard let limit = publishLimit, publishers > 0 else { return nil }
        return limit / publishers + (index < limit % publishers ? 1 : 0)
    }
}

/// `--publish-to`: the publishers all on the first URL, or spread round-robin
/// over every URL (publisher p on URL p % N).
enum PublishTo: String, Sendable, CaseIterable {
    case first
    case all
}

/// A parsed `http://host[:port][/base]` URL: where to connect and what to put
/// before `/<channel>/<topic>` in request targets.
struct LoadTarget: Sendable, Equatable, CustomStringConvertible {
    /// Host name or numeric address, without IPv6 brackets.
    var host: String
    var port: Int
    /// Path prefix without a trailing slash ("" or e.g. "/sse").
    var basePath: String

    /// The `Host` header's value.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }

    /// The request target for a channel and topic.
    func path(_ channel: Channel, _ topic: String) -> String {
        "\(basePath)/\(channel.rawValue)/\(topic)"
    }

    var description: String { "http://\(hostHeader)\(basePath)" }
}
