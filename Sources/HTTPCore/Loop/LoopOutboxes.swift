import Glibc

/// Turn-end work one loop's thread readied for other loops (a publish on this loop
/// reaching streams whose connections live on others), gathered per target loop
/// while this loop's jobs run and handed over together: one lock and at most one
/// wake-up per target loop per batch, however many streams were readied there.
/// A publish so crosses to each other loop once, not once per subscriber.
///
/// Used only by the thread of the loop that owns it (`LoopJobQueue` adds to it when
/// `LoopJobQueue.current` is that loop, and flushes from the loop's own run).
final class LoopOutboxes: @unchecked Sendable {
    // @unchecked: `pending` is read and written only on the owning loop's thread
    // (every caller is `LoopJobQueue`, on `current`'s thread, see the type's doc), so
    // no two threads ever touch it; Sendable only so the queue holding it can be.
    private var pending: [(target: LoopJobQueue, works: [any TurnEndWork])] = []
    private var isEmpty = true

    /// Keeps `work` for `target` until the next `flush`.
    func add(_ work: any TurnEndWork, for target: LoopJobQueue) {
        isEmpty = false
        for index in pending.indices where pending[index].target === target {
            pending[index].works.append(work)
            return
        }
        pending.append((target, [work]))
    }

    /// Hands every target what was gathered for it, one batch each.
    func flush() {
        guard !isEmpty else { return }
        isEmpty = true
        for index in pending.indices where !pending[index].works.isEmpty {
            pending[index].target.receive(pending[index].works)
            pending[index].works.removeAll(keepingCapacity: true)
        }
    }
}

extension LoopJobQueue {
    /// The loop whose thread is calling, nil off every loop thread.
    static var current: LoopJobQueue? {
        pthread_getspecific(currentKey).map { Unmanaged<LoopJobQueue>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Marks the calling thread as this loop's (once, as the loop thread starts).
    /// Loops live as long as the process, so the unretained pointer never dangles.
    func markCurrentThread() {
        pthread_setspecific(Self.currentKey, Unmanaged.passUnretained(self).toOpaque())
    }

    private static let currentKey: pthread_key_t = {
        var key = pthread_key_t()
        let status = pthread_key_create(&key, nil)
        precondition(status == 0, "pthread_key_create failed: \(status)")
        return key
    }()
}
