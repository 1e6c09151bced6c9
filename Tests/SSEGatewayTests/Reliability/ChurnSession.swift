import Foundation
import TestSupport

extension ChurnCycle {
    /// One short subscription. Session `n`: topic `n % topics`; every fourth on
    /// `/state`; even ones leave with a FIN, odd ones with a reset; one in eight
    /// (of each kind) leaves right after sending its request, before the head;
    /// the others read 1–20 events (1–4 on `/state`, which changes less often),
    /// about a second's worth. Over TLS, one in four (4 and 5 modulo 8, so
    /// half with a FIN, half with a reset) gives up during the handshake instead.
    func runSession(_ session: Int) async -> Result {
        var result = Result()
        result.sessions = 1
        let graceful = session.isMultiple(of: 2)
        if graceful { result.graceful = 1 } else { result.abrupt = 1 }
        let index = session % Reliability.Churn.topics
        let channel: StreamChannel = session % 4 == 3 ? .state : .events
        let target = "/\(channel.rawValue)/\(topic(index))"
        let name = "session \(session) \(target)"
        let spread = (session &* 2_654_435_761) >> 7
        if transport == .tls && (session % 8 == 4 || session % 8 == 5) {
            result.merge(await abandonHandshake(session, graceful: graceful, spread: spread))
            return result
        }

        do {
            if session % 8 == 2 || session % 8 == 7 {
                let stream = try await CheckedStream.sendOnly(port: port, target: target, tls: transport.client)
                result.beforeHead = 1
                if graceful { stream.close() } else { stream.leaveAbruptly() }
                return result
            }
            let before = ledger.acked(topic: index, channel: channel)
            let stream = try await CheckedStream.open(port: port, target: target,
                                                      order: channel == .events ? .contiguous : .increasing,
                                                      tls: transport.client, check: Self.dataMatchesID)
            let highest = ledger.acked(topic: index, channel: channel) + 2
            let wanted = channel == .events ? 1 + spread % 20 : 1 + spread % 4
            let complete = try await stream.read(count: wanted, within: 10)
            if !complete { result.problems.append("\(name): \(stream.count) of \(wanted) events within 10 s") }
            if let problem = stream.problem { result.problems.append("\(name): \(problem)") }
            if let first = stream.first {
                // Events: nothing acked before the request; state: the current value, not older.
                let lowest = channel == .events ? before + 1 : max(before, 1)
                if first < lowest || first > highest {
                    result.problems.append("\(name): first id \(first), expected \(lowest)...\(highest)")
                }
            }
            if graceful {
                // The server closes its side once it sees the FIN (no terminator: nobody is listening).
                if await stream.leaveGracefully(within: 10) == .stillOpen {
                    result.problems.append("\(name): still open 10 s after its FIN")
                }
                if let problem = stream.problem { result.problems.append("\(name) (after its FIN): \(problem)") }
            } else {
                stream.leaveAbruptly()
            }
            result.eventsRead = stream.count
        } catch {
            result.problems.append("\(name): \(error)")
        }
        return result
    }
}
