// Proof that ThreadSanitizer's reports on a contended `Synchronization.Mutex` are false
// positives on Linux, and that `Locked` (Sources/Locking) removes them:
//
//   swiftc -sanitize=thread -O -parse-as-library -I Sources/CThreadSanitizer \
//       scripts/tsan-mutex-probe.swift Sources/Locking/*.swift -o /tmp/tsan-mutex-probe
//   /tmp/tsan-mutex-probe mutex    # "Swift access race" reports, total 400000
//   /tmp/tsan-mutex-probe locked   # no report, total 400000
//
// Two threads add 1 to an array element 200,000 times each, only ever inside the lock:
// there is no race by construction, and the exact total shows the lock excludes. TSan
// still reports one for `Mutex` because a contended lock and unlock go through
// `FUTEX_LOCK_PI` / `FUTEX_UNLOCK_PI` in the uninstrumented Synchronization library.
import Foundation
import Synchronization

@main
struct TSanMutexProbe {
    static func main() {
        let useMutex = CommandLine.arguments.dropFirst().first == "mutex"
        let mutex = Mutex<[Int]>([0])
        let locked = Locked<[Int]>([0])
        let done = Atomic<Int>(0)
        withUnsafePointer(to: mutex) { mutexPointer in
            withUnsafePointer(to: locked) { lockedPointer in
                nonisolated(unsafe) let mutex = mutexPointer
                nonisolated(unsafe) let locked = lockedPointer
                for _ in 0..<2 {
                    Thread {
                        for _ in 0..<200_000 {
                            if useMutex {
                                mutex.pointee.withLock { $0[0] += 1 }
                            } else {
                                locked.pointee.withLock { $0[0] += 1 }
                            }
                        }
                        done.add(1, ordering: .sequentiallyConsistent)
                    }.start()
                }
                while done.load(ordering: .sequentiallyConsistent) < 2 { usleep(1000) }
            }
        }
        print("total", useMutex ? mutex.withLock { $0[0] } : locked.withLock { $0[0] })
    }
}
