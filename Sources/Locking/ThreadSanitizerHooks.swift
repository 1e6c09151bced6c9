import Glibc

/// ThreadSanitizer's annotation entry points, found at run time: a TSan build exports
/// `__tsan_acquire` and `__tsan_release` from its runtime, any other build has neither
/// (so nothing here needs a build flag, and plain `swift test --sanitize=thread` works).
///
/// `acquire(a)` after taking a lock and `release(a)` before dropping it give TSan the
/// happens-before edges of a mutex identified by the address `a`.
@usableFromInline
struct ThreadSanitizerHooks: Sendable {
    @usableFromInline typealias Hook = @convention(c) (UnsafeRawPointer?) -> Void

    @usableFromInline let acquire: Hook
    @usableFromInline let release: Hook

    /// Both hooks under TSan; nil in every other build (one check per lock).
    @usableFromInline static let installed: ThreadSanitizerHooks? = {
        // A nil handle searches the whole process (`RTLD_DEFAULT`).
        guard let acquire = dlsym(nil, "__tsan_acquire"), let release = dlsym(nil, "__tsan_release") else {
            return nil
        }
        return ThreadSanitizerHooks(acquire: unsafeBitCast(acquire, to: Hook.self),
                                    release: unsafeBitCast(release, to: Hook.self))
    }()
}
