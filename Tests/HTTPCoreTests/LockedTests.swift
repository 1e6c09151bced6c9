import Glibc
@testable import Locking
import Testing

/// `Locked`: a mutex whose hand-offs ThreadSanitizer sees in a TSan build, and nothing more
/// in any other.
struct LockedTests {
    /// The weakly linked hooks are there exactly when the process has ThreadSanitizer's
    /// runtime (asked of the dynamic linker by name): true in the sanitizer pass
    /// (`scripts/sanitizers.sh thread`), false in the others.
    @Test func theHooksAreThereExactlyInATSanBuild() {
        let runtimeLoaded = dlsym(nil, "__tsan_acquire") != nil && dlsym(nil, "__tsan_release") != nil
        #expect(ThreadSanitizerHooks.present == runtimeLoaded)
    }

    /// Two threads adding under the lock lose nothing; under TSan, with the hooks, the
    /// contended hand-offs are no race report (the sanitizer pass fails on any report).
    @Test func contendedAddsAreAllCounted() async {
        final class Shared: Sendable {
            let values = Locked([Int]())
        }
        let shared = Shared()
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<2 {
                group.addTask {
                    for i in 0..<20_000 { shared.values.withLock { $0.append(worker * 100_000 + i) } }
                }
            }
        }
        #expect(shared.values.withLock { Set($0).count } == 40_000)
    }
}
