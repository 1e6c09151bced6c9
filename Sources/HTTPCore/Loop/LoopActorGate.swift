import Glibc
import Synchronization

/// The mutual exclusion of one loop's actor executor: the loop holds it while it runs an
/// actor job, and another loop's thread holds it while it runs code isolated to that
/// executor in place (`LoopActorExecutor.runIsolated`). Whoever holds it is the only
/// thread running code of the executor's actors, which is what `isIsolatingCurrentContext`
/// reports. Never held across a wait for anything but another holder's short critical
/// section: actor jobs never enter another loop's gate (`runIsolated` refuses), so no two
/// gates are ever waited for in a cycle.
final class LoopActorGate: @unchecked Sendable {
    // @unchecked: `mutex` is a pthread mutex allocated once and only used through
    // pthread_mutex_lock/unlock, which are thread-safe; `owner` is atomic.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    /// The holder's `pthread_t`, 0 when free.
    private let owner = Atomic<UInt>(0)

    init() {
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    var isHeldByCurrentThread: Bool {
        owner.load(ordering: .relaxed) == pthread_self()
    }

    /// Runs `body` holding the gate (re-entered freely by its holder).
    func run<T>(_ body: () -> T) -> T {
        if isHeldByCurrentThread { return body() }
        pthread_mutex_lock(mutex)
        owner.store(pthread_self(), ordering: .relaxed)
        defer {
            owner.store(0, ordering: .relaxed)
            pthread_mutex_unlock(mutex)
        }
        return body()
    }
}
