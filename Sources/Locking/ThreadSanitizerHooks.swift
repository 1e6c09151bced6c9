import CThreadSanitizer

/// ThreadSanitizer's annotation entry points: a TSan build's runtime defines
/// `__tsan_acquire` and `__tsan_release`, any other build has neither (so nothing here
/// needs a build flag, and plain `swift test --sanitize=thread` works). They are declared
/// weak (`CThreadSanitizer`), so the linker decides whether they are there: one load and
/// compare per lock, where a lazily found pair (a `static let`) cost a global accessor and
/// a `swift_once` at every lock from another module, about 20 instructions each: 110–140
/// of a fan-out's 4,600–4,800 per delivery, about 150 of a publish request's 30,000 (issue 27).
///
/// `acquire(a)` after taking a lock and `release(a)` before dropping it give TSan the
/// happens-before edges of a mutex identified by the address `a`.
@usableFromInline
enum ThreadSanitizerHooks {
    /// Whether this is a TSan build (both hooks there).
    @inlinable @inline(__always)
    static var present: Bool { streams_tsan_hooks_present() != 0 }

    @inlinable @inline(__always)
    static func acquire(_ address: UnsafeRawPointer) { streams_tsan_acquire(address) }

    @inlinable @inline(__always)
    static func release(_ address: UnsafeRawPointer) { streams_tsan_release(address) }
}
