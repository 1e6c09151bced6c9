import HTTPCore

/// What every client of one run shares, computed once before it starts: per
/// URL, the resolved address and each topic's request target and subscribe
/// request; and the origin of the run's clock.
struct RunPlan: Sendable {
    let configuration: LoadConfiguration
    /// One per `--url`, in order.
    let endpoints: [Endpoint]

    /// Resolves the hosts (blocking, once each) and builds the requests.
    init(configuration: LoadConfiguration) throws(LoadSetupError) {
        self.configuration = configuration
        var endpoints: [Endpoint] = []
        for target in configuration.targets {
            endpoints.append(try Endpoint(target: target, configuration: configuration))
        }
        self.endpoints = endpoints
    }

    /// The endpoint subscriber `index` connects to.
    func endpoint(ofSubscriber index: Int) -> Endpoint { endpoints[configuration.target(ofSubscriber: index)] }

    /// The endpoint publisher `index` publishes to.
    func endpoint(ofPublisher index: Int) -> Endpoint { endpoints[configuration.target(ofPublisher: index)] }

    /// The address of the first URL.
    var address: SocketAddress { endpoints[0].address }
}

/// One gateway (one `--url`): where to connect, and the requests for it.
struct Endpoint: Sendable {
    let target: LoadTarget
    let address: SocketAddress
    /// Request target of each topic (`<base>/<channel>/<prefix>/<i>`).
    let paths: [String]
    /// The `GET` request of each topic, ready to write.
    let subscribeRequests: [[UInt8]]

    init(target: LoadTarget, configuration: LoadConfiguration) throws(LoadSetupError) {
        guard let address = SocketAddress.resolve(host: target.host, port: target.port) else {
            throw LoadSetupError(message: "cannot resolve host '\(target.host)'")
        }
        self.target = target
        self.address = address
        paths = (0..<configuration.topics).map { target.path(configuration.channel, configuration.topicName($0)) }
        subscribeRequests = paths.map { path in
            Array(("GET \(path) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
                + "Accept: text/event-stream\r\nCache-Control: no-cache\r\nUser-Agent: sse-load\r\n\r\n").utf8)
        }
    }

    /// The `POST` request of one publish.
    func publishRequest(topic: Int, body: [UInt8]) -> [[UInt8]] {
        let head = "POST \(paths[topic]) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
            + "Content-Type: text/plain\r\nAccept: application/json\r\nUser-Agent: sse-load\r\n"
            + "Content-Length: \(body.count)\r\n\r\n"
        return [Array(head.utf8), body]
    }
}

/// A run that cannot start (unresolvable host, too few descriptors); exit status 1.
struct LoadSetupError: Error, Sendable, CustomStringConvertible {
    let message: String
    var description: String { message }
}
