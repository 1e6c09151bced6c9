/// A suspended task waiting for readiness, with its optional deadline.
///
/// The continuation is unsafe (no checked box: one allocation less per wait, that is per
/// request): a waiter lives in exactly one place, its descriptor's slot for its role, and
/// whoever takes it out of the slot under the loop's lock (readiness, a deadline, a
/// close, cancellation) is the one who resumes it, so it is resumed exactly once.
struct Waiter {
    let id: UInt64
    let interest: Interest
    let continuation: UnsafeContinuation<Void, Error>
    let deadline: ContinuousClock.Instant?
}
