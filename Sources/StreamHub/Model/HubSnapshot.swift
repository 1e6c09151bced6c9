/// Gauges read from the hub's tables at one instant (one actor turn).
public struct HubSnapshot: Sendable, Equatable {
    /// Topics the hub holds (with subscribers, a state value or replayable events).
    public var topics: Int
    /// Subscribers registered on `/state` channels.
    public var stateSubscribers: Int
    /// Subscribers registered on `/events` channels.
    public var eventsSubscribers: Int

    public init(topics: Int, stateSubscribers: Int, eventsSubscribers: Int) {
        self.topics = topics
        self.stateSubscribers = stateSubscribers
        self.eventsSubscribers = eventsSubscribers
    }

    /// Subscribers registered on `channel`.
    public func subscribers(_ channel: Channel) -> Int {
        switch channel {
        case .state: stateSubscribers
        case .events: eventsSubscribers
        }
    }
}
