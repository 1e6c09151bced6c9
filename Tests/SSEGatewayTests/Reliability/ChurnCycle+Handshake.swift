import Glibc
import HTTPCore
import TestSupport

extension ChurnCycle {
    /// How far a TLS client that gives up gets into the handshake.
    enum HandshakeStage: String, CaseIterable {
        /// Connected, sent nothing.
        case silent
        /// Sent the first part of a ClientHello (1 byte up to all but one).
        case partialHello = "partial ClientHello"
        /// Sent a whole ClientHello and read the gateway's first flight (its
        /// ServerHello onwards), but never sent its own Finished.
        case afterServerFlight = "after the server's flight"
    }

    /// Seconds a client that sent a FIN mid-handshake waits for the gateway to
    /// close: well under the 10 s header timeout, which would also close it.
    static let closeAfterFINWithin = 5.0

    /// A TLS session that leaves during the handshake, on a plain TCP connection
    /// carrying the TLS bytes it chooses (a fresh ClientHello from OpenSSL):
    /// stage `(session / 8) % 3`; with a reset, or (`graceful`) with a FIN after
    /// which the gateway must close its side within `closeAfterFINWithin`.
    func abandonHandshake(_ session: Int, graceful: Bool, spread: Int) async -> Result {
        var result = Result()
        result.midHandshake = 1
        let stage = HandshakeStage.allCases[(session / 8) % HandshakeStage.allCases.count]
        let name = "session \(session) (TLS, leaves \(stage.rawValue))"
        do {
            let client = try await HTTPClient.connect(port: port, deadline: .now + .seconds(10))
            defer { client.close() }
            switch stage {
            case .silent:
                break
            case .partialHello:
                let hello = try ClientHello.make()
                try await client.send(Array(hello.prefix(1 + spread % (hello.count - 1))))
            case .afterServerFlight:
                try await client.send(try ClientHello.make())
                let flight = try await client.connection.read(maxBytes: 16 * 1024, deadline: .now + .seconds(10))
                if flight.first != 0x16 {  // a handshake record: the ServerHello
                    result.problems.append("\(name): the gateway answered the ClientHello with \(flight.prefix(8))")
                }
            }
            if graceful {
                Glibc.shutdown(client.connection.fd, Int32(SHUT_WR))
                let sent = ContinuousClock.now
                let closed = await closedByGateway(client, within: Self.closeAfterFINWithin)
                result.slowestCloseAfterFIN = ContinuousClock.now - sent
                if !closed {
                    result.problems.append("\(name): still open \(Int(Self.closeAfterFINWithin)) s after its FIN")
                }
            } else {
                client.connection.setResetOnClose()
            }
        } catch {
            result.problems.append("\(name): \(error)")
        }
        return result
    }

    /// Reads (discarding) until the gateway closes the connection; false if it
    /// is still open after `seconds`.
    private func closedByGateway(_ client: HTTPClient, within seconds: Double) async -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while true {
            do {
                if try await client.connection.read(maxBytes: 16 * 1024, deadline: deadline).isEmpty { return true }
            } catch IOWaitError.timedOut {
                return false
            } catch {
                return true  // a reset: closed too
            }
        }
    }
}
