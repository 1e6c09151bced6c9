@testable import HTTPCore
import Testing

/// A clock that moves only when told: instants are offsets from zero.
private struct StepClock: Clock {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    var now = Instant(offset: .zero)
    var minimumResolution: Duration { .nanoseconds(1) }

    func sleep(until deadline: Instant, tolerance: Duration?) async throws {
        preconditionFailure("the lifecycle never sleeps")
    }

    mutating func advance(_ duration: Duration) { now = now.advanced(by: duration) }
}

private typealias Lifecycle = ConnectionLifecycle<StepClock>

private let timeouts = Lifecycle.Timeouts(header: .seconds(10), idle: .seconds(60), body: .seconds(5))

/// `handle` outside `#expect`, which cannot take a mutating call.
private func apply(_ event: HTTPServer.LifecycleEvent, to state: inout HTTPServer.ServerState) -> Bool {
    state.handle(event)
}

private func at(_ seconds: Int) -> StepClock.Instant { StepClock.Instant(offset: .seconds(seconds)) }

struct ConnectionLifecycleTests {
    /// A plain connection's first request must start within the header timeout of the accept.
    @Test func firstRequestIsDueWithinTheHeaderTimeout() {
        var lifecycle = Lifecycle(timeouts: timeouts, tls: false, now: at(0))
        lifecycle.handle(.awaitingRequest(midRequest: false), now: at(3))
        #expect(lifecycle.state == .idle(deadline: at(10)))
        #expect(lifecycle.isIdle)
    }

    /// Over TLS the handshake has the header timeout, and the first head gets it again from the handshake's end.
    @Test func tlsHandshakeThenTheFirstRequest() {
        var lifecycle = Lifecycle(timeouts: timeouts, tls: true, now: at(0))
        #expect(lifecycle.readDeadline == at(10))
        lifecycle.handle(.handshakeCompleted, now: at(4))
        lifecycle.handle(.awaitingRequest(midRequest: false), now: at(4))
        #expect(lifecycle.state == .idle(deadline: at(14)))
    }

    /// A head's deadline is fixed by its first byte: more bytes do not extend it (the slowloris bound).
    @Test func headDeadlineIsFixedFromTheFirstByte() {
        var lifecycle = Lifecycle(timeouts: timeouts, tls: false, now: at(0))
        lifecycle.handle(.awaitingRequest(midRequest: false), now: at(0))
        lifecycle.handle(.bytesArrived, now: at(2))
        #expect(lifecycle.state == .readingHead(deadline: at(12)))
        lifecycle.handle(.bytesArrived, now: at(9))
        #expect(lifecycle.readDeadline == at(12))
    }

    /// A body must keep moving: every read that brings bytes renews the body deadline.
    @Test func bodyDeadlineMovesWithEveryRead() {
        var lifecycle = Lifecycle(timeouts: timeouts, tls: false, now: at(0))
        lifecycle.handle(.awaitingRequest(midRequest: false), now: at(0))
        lifecycle.handle(.bytesArrived, now: at(1))
        lifecycle.handle(.headParsed, now: at(2))
        #expect(lifecycle.state == .readingBody(deadline: at(7)))
        lifecycle.handle(.bytesArrived, now: at(6))
        #expect(lifecycle.state == .readingBody(deadline: at(11)))
        lifecycle.handle(.requestParsed, now: at(8))
        #expect(lifecycle.state == .responding)
        #expect(lifecycle.readDeadline == nil)
    }

    /// After a keep-alive response the next request gets the idle timeout, or the header
    /// timeout when its bytes are already buffered (pipelined).
    @Test func keepAliveThenIdleOrPipelined() {
        var lifecycle = Lifecycle(timeouts: timeouts, tls: false, now: at(0))
        lifecycle.handle(.awaitingRequest(midRequest: false), now: at(0))
        lifecycle.handle(.bytesArrived, now: at(1))
        lifecycle.handle(.requestParsed, now: at(1))
        lifecycle.handle(.responded(keepAlive: true), now: at(2))
        lifecycle.handle(.awaitingRequest(midRequest: false), now: at(2))
        #expect(lifecycle.state == .idle(deadline: at(62)))
        lifecycle.handle(.bytesArrived, now: at(30))
        lifecycle.handle(.requestParsed, now: at(30))
        lifecycle.handle(.responded(keepAlive: true), now: at(31))
        lifecycle.handle(.awaitingRequest(midRequest: true), now: at(31))
        #expect(lifecycle.state == .readingHead(deadline: at(41)))
        #expect(!lifecycle.isIdle)
    }

    /// A refusal lingers then closes; a stream owns the connection until it ends; a close-response closes.
    @Test func endings() {
        var refused = Lifecycle(timeouts: timeouts, tls: false, now: at(0))
        refused.handle(.awaitingRequest(midRequest: false), now: at(0))
        refused.handle(.bytesArrived, now: at(1))
        refused.handle(.refused, now: at(1))
        #expect(refused.state == .lingering)
        refused.handle(.closed, now: at(2))
        #expect(refused.state == .closed)

        var streaming = Lifecycle(timeouts: timeouts, tls: false, now: at(0))
        streaming.handle(.awaitingRequest(midRequest: false), now: at(0))
        streaming.handle(.bytesArrived, now: at(0))
        streaming.handle(.requestParsed, now: at(0))
        streaming.handle(.streamStarted, now: at(0))
        #expect(streaming.state == .streaming)

        var closing = Lifecycle(timeouts: timeouts, tls: false, now: at(0))
        closing.handle(.awaitingRequest(midRequest: false), now: at(0))
        closing.handle(.bytesArrived, now: at(0))
        closing.handle(.requestParsed, now: at(0))
        closing.handle(.responded(keepAlive: false), now: at(0))
        #expect(closing.state == .closed)
    }

    /// The server's lifecycle: ready → running → shuttingDown → stopped; repeats are harmless.
    @Test func serverLifecycle() {
        var state = HTTPServer.ServerState()
        #expect(apply(.start, to: &state))
        #expect(!apply(.start, to: &state))
        #expect(state.acceptsConnections)
        #expect(apply(.shutdown, to: &state))
        #expect(!apply(.shutdown, to: &state))
        #expect(!state.acceptsConnections)
        #expect(apply(.finished, to: &state))
        #expect(state.lifecycle == .stopped)
        var early = HTTPServer.ServerState()
        #expect(apply(.shutdown, to: &early))
        #expect(!apply(.start, to: &early))
    }
}
