/// The server's HTTP/2 connections: one `HTTP2Connection` in the connection's task,
/// listed so that shutdown sends it a GOAWAY first.
extension HTTPServer {
    func serveHTTP2(on connection: Connection, initial: [UInt8]) async {
        let http2 = HTTP2Connection(connection: connection, configuration: configuration, counters: counters.http2,
                                    handler: handler)
        if !enterHTTP2(http2) { http2.goAway() }
        defer { leaveHTTP2(http2) }
        await http2.run(initial: initial)
    }
}
