import RedisClient

/// A gateway's two connections to Redis while it answers: one for commands
/// (publishes, fences, syncs, counts; pipelined) and one in subscribed mode for
/// the followed topics' channels and this gateway's probe; with `--redis-min-replicas`
/// a third for publishes, whose `WAIT`s hold up nothing else (and which take turns: `ReplicaTurns`).
struct RedisLink: Sendable, NumberedLink {
    let command: RedisConnection
    let subscriber: RedisSubscriber
    /// Where publishes run: `command`, or a connection of their own when each is followed by a `WAIT`.
    let publisher: RedisConnection
    /// Which link this is (messages of an older one are ignored).
    let generation: UInt64
    /// The publishes on `publisher`, several to a script call under load.
    let publishes: PublishBatcher

    init(command: RedisConnection, subscriber: RedisSubscriber, publisher: RedisConnection, generation: UInt64) {
        self.command = command
        self.subscriber = subscriber
        self.publisher = publisher
        self.generation = generation
        publishes = PublishBatcher(connection: publisher)
    }

    var isOpen: Bool { command.isOpen && subscriber.isOpen && publisher.isOpen }

    func close() {
        command.close()
        subscriber.close()
        publisher.close()
    }
}

/// The Redis link's life, the one place that says what state it is in. The engine
/// holds one per shard of Redis it uses (today one: a single Redis, or the master
/// Sentinel names); every `await` of the engine is followed by a look at it again.
///
/// - `connecting`: no link; `attempt` counts failed tries since the last link (the
///   back-off grows with it), `master` is the last master address used (a different
///   one next time means a failover).
/// - `up`: both connections answer; publishes and subscriptions use them.
/// - `shutDown`: final; nothing connects again.
typealias LinkPhase = LinkState<RedisLink>

/// A link told apart from older ones by its generation.
protocol NumberedLink: Sendable {
    var generation: UInt64 { get }
}

/// The phases of a link (generic over the link, so its transitions are tested without connections).
enum LinkState<Link: NumberedLink>: Sendable {
    case connecting(attempt: Int, master: RedisURL?)
    case up(Link, master: RedisURL)
    case shutDown

    /// The back-off before the try after `attempt` failed ones: 50 ms doubling, at most `ceiling`.
    static func backoff(attempt: Int, ceiling: Duration) -> Duration {
        min(.milliseconds(50) * (1 << min(attempt, 10)), ceiling)
    }

    var link: Link? {
        if case .up(let link, _) = self { link } else { nil }
    }

    var isShutDown: Bool {
        if case .shutDown = self { true } else { false }
    }

    /// The master of the link in use, or of the last one.
    var lastMaster: RedisURL? {
        switch self {
        case .connecting(_, let master): master
        case .up(_, let master): master
        case .shutDown: nil
        }
    }

    /// What happens to the link, one event at a time.
    enum Event {
        case failed
        case connected(Link, master: RedisURL)
        case lost(generation: UInt64)
        case shutdown
    }

    /// The phase after `event`; an event that does not apply (a loss of an older
    /// link, anything after shutdown) leaves the phase as it is.
    func after(_ event: Event) -> LinkState {
        switch (self, event) {
        case (.shutDown, _), (_, .shutdown):
            return .shutDown
        case (.connecting(let attempt, let master), .failed):
            return .connecting(attempt: attempt + 1, master: master)
        case (.connecting, .connected(let link, let master)):
            return .up(link, master: master)
        case (.up(let link, let master), .lost(let generation)) where link.generation == generation:
            return .connecting(attempt: 0, master: master)
        case (.up, .lost), (.connecting, .lost):
            return self
        case (.up, .failed), (.up, .connected):
            preconditionFailure("the link connects only while connecting")
        }
    }
}
