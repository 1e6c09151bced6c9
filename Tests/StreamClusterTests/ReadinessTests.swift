import Testing
@testable import StreamCluster

/// What `/readyz` reads, driven call by call without Redis: ready only with a link up, its
/// probe back and no pause; the first cause of going down is the one told; an older link's
/// close is ignored.
struct ReadinessTests {
    @Test func readyOnlyWhileALinkIsUpAndNoPauseRuns() {
        let readiness = Readiness()
        #expect(!readiness.isReady && readiness.reason?.contains("unreachable (connecting)") == true)
        readiness.up(generation: 1)
        readiness.probeReturned(generation: 1)
        #expect(readiness.isReady && readiness.reason == nil && readiness.isLinkUp)

        readiness.pause(until: .now + .seconds(60))
        #expect(!readiness.isReady && readiness.isLinkUp)
        #expect(readiness.reason?.contains("may have lost data") == true)
        readiness.pause(until: .now - .seconds(1))  // An earlier end does not shorten a running pause.
        #expect(!readiness.isReady)
    }

    /// A publish asks `isReady(shard:)`, which answers as `reason(shard:)` does without
    /// building the reason: not ready while connecting, waiting for the probe, paused, down,
    /// for a shard it does not know, or shut down; ready once a pause has ended.
    @Test func aShardIsReadyExactlyWhenItHasNoReason() {
        let readiness = Readiness(shards: 2)
        func agrees(_ comment: Comment) {
            for shard in 0...2 {
                #expect(readiness.isReady(shard: shard) == (readiness.reason(shard: shard) == nil), comment)
            }
        }
        agrees("connecting")
        #expect(!readiness.isReady(shard: 0))
        readiness.up(shard: 0, generation: 1)
        agrees("probe pending")
        readiness.probeReturned(shard: 0, generation: 1)
        #expect(readiness.isReady(shard: 0) && !readiness.isReady(shard: 1) && !readiness.isReady(shard: 2))
        agrees("shard 0 up")
        readiness.pause(shard: 0, until: .now + .seconds(60))
        #expect(!readiness.isReady(shard: 0))
        agrees("paused")
        readiness.paused(shard: 0, for: .zero)  // Over as Redis says: its end has passed.
        #expect(readiness.isReady(shard: 0))
        agrees("a pause that ended")
        readiness.overall(.probeLost)
        #expect(!readiness.isReady(shard: 0))
        agrees("overall")
        readiness.overall(nil)
        readiness.down(shard: 0, .shutDown)
        #expect(!readiness.isReady(shard: 0))
        agrees("shut down")
    }

    /// Writes refused (Redis out of memory): `/readyz`'s word is not ready, with Redis's own, but the
    /// shard still serves (subscriptions); a new link keeps the refusal until its own liveness write
    /// (made before the link is put in place) says otherwise.
    @Test func writesRefusedAreNotReadyButTheShardServes() {
        let readiness = Readiness()
        readiness.up(generation: 1)
        readiness.probeReturned(generation: 1)
        #expect(readiness.writes(refused: "OOM command not allowed") == nil)
        #expect(!readiness.isReady && readiness.isReady(shard: 0) && readiness.servesSubscriptions && readiness.isLinkUp)
        #expect(readiness.reason?.contains("refuses writes") == true && readiness.reason?.contains("OOM") == true)
        #expect(readiness.writes(refused: nil) == "OOM command not allowed")
        #expect(readiness.isReady && readiness.reason == nil)
        readiness.writes(refused: "MISCONF")
        readiness.down(.unreachable("gone"))
        #expect(readiness.reason?.contains("unreachable (gone)") == true)  // The link's loss comes first.
        #expect(!readiness.servesSubscriptions)
        readiness.up(generation: 2)
        readiness.probeReturned(generation: 2)
        #expect(!readiness.isReady && readiness.reason?.contains("MISCONF") == true)
        readiness.writes(refused: nil)
        #expect(readiness.isReady)
    }

    /// The pause as Redis last said it (`paused(for:)`, after a failover): at most that long,
    /// told as such, and over the moment Redis says so — not when the bound passes.
    @Test func aPauseEndsWhenRedisSaysItEnded() {
        let readiness = Readiness()
        readiness.up(generation: 1)
        readiness.probeReturned(generation: 1)
        readiness.paused(for: .seconds(3))
        #expect(!readiness.isReady && readiness.isPaused())
        #expect(readiness.reason?.contains("restore the ids (at most") == true, "\(readiness.reason ?? "")")
        readiness.paused(for: .milliseconds(500))  // Redis's word replaces the last one, shorter or not.
        #expect(readiness.reason?.contains("at most 5") == true || readiness.reason?.contains("at most 4") == true,
                "\(readiness.reason ?? "")")
        readiness.paused(for: nil)
        #expect(readiness.isReady && !readiness.isPaused())
    }

    @Test func theFirstCauseIsToldAndOlderLinksAreIgnored() {
        let readiness = Readiness()
        readiness.up(generation: 2)
        readiness.probeReturned(generation: 2)
        #expect(!readiness.connectionClosed(generation: 1, because: .endedByRedis))
        #expect(readiness.isReady, "a connection of an older link closing changes nothing")
        readiness.down(.probeLost)
        readiness.down(.unreachable("the connection was lost"))
        #expect(readiness.reason == NotReady.probeLost.text)
        readiness.stillDown(.noMaster("no sentinel answers"))
        #expect(readiness.reason?.hasPrefix("no Redis master is known") == true)
        readiness.up(generation: 3)
        readiness.probeReturned(generation: 3)
        #expect(readiness.isReady)
        #expect(readiness.connectionClosed(generation: 3, because: .replyLate))
        #expect(readiness.reason?.contains("a connection to Redis closed: a reply came later than the command timeout") == true
                && !readiness.isLinkUp)
        #expect(!readiness.connectionClosed(generation: 3, because: .endedByRedis), "the link's second connection: down already")
        readiness.down(.shutDown)
        readiness.stillDown(.unreachable("late"))
        #expect(readiness.reason == NotReady.shutDown.text, "shutdown is final")
    }

    /// A new link is not ready until a probe sent through it came back (after a lost probe
    /// too): a probe of an older link does not count; a loss meanwhile is told as the cause.
    @Test func aNewLinkWaitsForItsProbe() {
        let readiness = Readiness()
        readiness.up(generation: 1)
        readiness.probeReturned(generation: 1)
        readiness.down(.probeLost)
        readiness.up(generation: 2)
        #expect(!readiness.isReady && readiness.isLinkUp)
        #expect(readiness.reason == NotReady.probePending.text)
        readiness.probeReturned(generation: 1)
        #expect(!readiness.isReady, "a probe of the old link proves nothing about the new one")
        readiness.down(.probeLost)
        #expect(readiness.reason == NotReady.probeLost.text, "a pending probe gives way to the cause")
        readiness.up(generation: 3)
        readiness.probeReturned(generation: 3)
        #expect(readiness.isReady)
    }
}
