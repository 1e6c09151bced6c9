/// A suspended task waiting for readiness, with its optional deadline.
struct Waiter {
    let id: UInt64
    let interest: Interest
    let continuation: CheckedContinuation<Void, Error>
    let deadline: ContinuousClock.Instant?
}
