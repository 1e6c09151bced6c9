/// A serial executor whose isolation a thread can take synchronously: it waits (briefly,
/// on a mutex) while a job of the executor runs on another thread, then runs its code
/// as if it were one of the executor's jobs. The event loops' actor executors are such:
/// a publish handler on one loop can publish to a hub shard on another loop in place,
/// without sending a job there and waiting for the reply to come back.
public protocol SynchronousIsolation: SerialExecutor {
    /// Runs `body` isolated to this executor on the calling thread; nil (nothing run)
    /// where the calling thread must not wait for it (off the event loops, or inside a
    /// job of another such executor, which could otherwise wait in a cycle).
    func runIsolated<T>(_ body: () -> T) -> T?
}
