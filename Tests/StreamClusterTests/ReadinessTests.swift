import Testing
@testable import StreamCluster

/// What `/readyz` reads, driven call by call without Redis: ready only with a link up and
/// no pause; the first cause of going down is the one told; an older link's close is ignored.
struct ReadinessTests {
    @Test func readyOnlyWhileALinkIsUpAndNoPauseRuns() {
        let readiness = Readiness()
        #expect(!readiness.isReady && readiness.reason?.contains("unreachable (connecting)") == true)
        readiness.up(generation: 1)
        #expect(readiness.isReady && readiness.reason == nil && readiness.isLinkUp)

        readiness.pause(until: .now + .seconds(60))
        #expect(!readiness.isReady && readiness.isLinkUp)
        #expect(readiness.reason?.contains("may have lost data") == true)
        readiness.pause(until: .now - .seconds(1))  // An earlier end does not shorten a running pause.
        #expect(!readiness.isReady)
    }

    @Test func theFirstCauseIsToldAndOlderLinksAreIgnored() {
        let readiness = Readiness()
        readiness.up(generation: 2)
        readiness.connectionClosed(generation: 1)
        #expect(readiness.isReady, "a connection of an older link closing changes nothing")
        readiness.down(.probeLost)
        readiness.down(.unreachable("the connection was lost"))
        #expect(readiness.reason == NotReady.probeLost.text)
        readiness.stillDown(.noMaster("no sentinel answers"))
        #expect(readiness.reason?.hasPrefix("no Redis master is known") == true)
        readiness.up(generation: 3)
        #expect(readiness.isReady)
        readiness.connectionClosed(generation: 3)
        #expect(readiness.reason?.contains("a connection to Redis closed") == true && !readiness.isLinkUp)
        readiness.down(.shutDown)
        readiness.stillDown(.unreachable("late"))
        #expect(readiness.reason == NotReady.shutDown.text, "shutdown is final")
    }

    /// A refused publish's reason: why not ready when not, else the publish's own.
    @Test func aRefusalSaysWhy() {
        let readiness = Readiness()
        readiness.up(generation: 1)
        readiness.refused("only 0 of the 1 replicas required")
        #expect(readiness.refusal == "only 0 of the 1 replicas required")
        readiness.down(.probeLost)
        #expect(readiness.refusal == NotReady.probeLost.text)
    }
}
