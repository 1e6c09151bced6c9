import Synchronization

/// A `Synchronization.Mutex` whose hand-offs ThreadSanitizer can see; otherwise the same
/// type, API and cost. Every lock in the package is one of these (and nothing else guards
/// shared state but atomics), so a TSan run reports real races only.
///
/// Why it exists: on Linux a contended `Mutex` is taken and released through the kernel
/// (`FUTEX_LOCK_PI` / `FUTEX_UNLOCK_PI`, inside the Synchronization library, which is not
/// instrumented). TSan then sees no happens-before edge from one thread's unlock to the
/// next thread's lock and reports the guarded value as raced whenever two threads contend:
/// `scripts/tsan-mutex-probe.swift` shows it with two threads adding to a `Mutex<[Int]>`
/// (two or three race reports, yet the total is exact). Here each critical section
/// acquires and releases a TSan sync object at the lock's own address, which is what
/// TSan's `pthread_mutex` interceptors do. Without TSan the hooks are absent and the
/// cost is one load and branch (`ThreadSanitizerHooks.present`, a weak symbol's address).
///
/// `@inlinable` so the hot paths in other modules (event loop, subscriber queues) are
/// specialized and inlined as `Mutex.withLock` itself is.
public struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>

    @inlinable
    public init(_ initialValue: consuming sending Value) {
        mutex = Mutex(initialValue)
    }

    /// Runs `body` with exclusive access to the value, as `Mutex.withLock`.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        guard ThreadSanitizerHooks.present else {
            return try mutex.withLock(body)
        }
        // The lock's address names it to TSan. `Mutex` is raw-layout and never moves
        // while borrowed, so this is its storage, the same for every thread.
        let address = withUnsafePointer(to: self) { UnsafeRawPointer($0) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            ThreadSanitizerHooks.acquire(address)
            defer { ThreadSanitizerHooks.release(address) }
            return try body(&value)
        }
    }
}
