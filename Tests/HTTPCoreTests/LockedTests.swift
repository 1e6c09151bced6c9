import Foundation
import Glibc
@testable import Locking
import Synchronization
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

    /// Two threads (not tasks, which the pool may run one after the other) contend for one
    /// lock 200,000 times each. Under TSan, whose reports fail the sanitizer pass, that is no
    /// race report only if the hooks give it the hand-offs (`Synchronization.Mutex` alone
    /// gets two or three, `scripts/tsan-mutex-probe.swift`); in every build no add is lost.
    @Test func contendedHandOffsAreSeenByTSan() async {
        final class Shared: Sendable {
            let total = Locked([0])
            let running = Atomic<Int>(2)
        }
        let shared = Shared()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for _ in 0..<2 {
                Thread.detachNewThread {
                    for _ in 0..<200_000 { shared.total.withLock { $0[0] += 1 } }
                    if shared.running.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 { done.resume() }
                }
            }
        }
        #expect(shared.total.withLock { $0[0] } == 400_000)
    }
}
