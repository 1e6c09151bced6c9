/// Work decided under the loop's lock and done after releasing it: resuming
/// continuations and calling hang-up handlers never happens under the lock.
struct LoopActions {
    var resumptions: [(UnsafeContinuation<Void, Error>, Result<Void, Error>)] = []
    var handlers: [@Sendable () -> Void] = []

    func run() {
        for (continuation, result) in resumptions { continuation.resume(with: result) }
        for handler in handlers { handler() }
    }
}
