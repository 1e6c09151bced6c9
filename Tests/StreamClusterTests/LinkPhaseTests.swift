import RedisClient
import Testing
@testable import StreamCluster

/// The Redis link's phases driven event by event, without Redis: what each event
/// leads to, and the back-off that grows with failed attempts.
struct LinkPhaseTests {
    /// Failed attempts count up (the back-off doubles from 50 ms to its ceiling), a loss of an
    /// older link changes nothing, the link in use lost returns to connecting (remembering its
    /// master, so a different one next time is a failover), and shutdown is final.
    @Test func phasesFollowTheirEvents() {
        let master = RedisURL(host: "127.0.0.1", port: 6379)
        var phase = LinkState<NumberedOnly>.connecting(attempt: 0, master: nil)
        phase = phase.after(.failed).after(.failed)
        guard case .connecting(let attempt, nil) = phase else { Issue.record("not connecting: \(phase)"); return }
        #expect(attempt == 2)
        #expect(LinkPhase.backoff(attempt: 1, ceiling: .seconds(1)) == .milliseconds(100))
        #expect(LinkPhase.backoff(attempt: 2, ceiling: .seconds(1)) == .milliseconds(200))
        #expect(LinkPhase.backoff(attempt: 30, ceiling: .seconds(1)) == .seconds(1))

        phase = phase.after(.connected(NumberedOnly(generation: 7), master: master))
        #expect(phase.link?.generation == 7 && phase.lastMaster == master)
        phase = phase.after(.lost(generation: 6))
        #expect(phase.link?.generation == 7, "the loss of an older link must not end this one")
        phase = phase.after(.lost(generation: 7))
        guard case .connecting(0, let remembered) = phase else { Issue.record("not connecting: \(phase)"); return }
        #expect(remembered == master && phase.link == nil)
        phase = phase.after(.shutdown)
        #expect(phase.isShutDown)
        phase = phase.after(.failed)
        #expect(phase.isShutDown, "shutdown is final")
    }

}

/// A link as the phases see it: its generation.
private struct NumberedOnly: NumberedLink {
    let generation: UInt64
}
