import Locking
import RedisClient

/// Publishes on one Redis connection, the ones handed in together (during one turn of
/// the event loop, in the gateway) in one call of the publish script
/// (`ClusterScripts.publish`): Redis spends about 14 µs on a call of one value and
/// 7 µs a value in calls of 16 (measured on this project's machine: the call's own
/// cost is most of a lone publish's).
///
/// Promises (the rules are `PublishBatching`'s):
/// - a publish that finds no batch forming leads one: its task yields once (to the
///   back of its executor's queue: on an event loop, behind the jobs of this turn,
///   whose publishes join), then sends the batch. That yield is the only wait added;
///   no publish waits for another's answer to be sent;
/// - each publish gets its own outcome: its id and the other gateways' subscribers,
///   or its own refusal (Redis's error for its commands, the whole call's error, or
///   its deadline passed before its batch was sent: nothing of it was sent then). A
///   cancelled leader (its client went away) still sends the batch and waits for it:
///   the others' outcomes do not depend on it;
/// - a publish handed in after another one was answered is stored after it (one
///   connection's publishes, each awaited before the next, keep their order). Batches
///   handed in at once on several loops may be sent in either order, as concurrent
///   publishes may be stored in either order;
/// - no task of its own: the leader's task sends the batch and hands each of the
///   others its outcome. Nothing is resumed while the lock is held. A publish waits
///   for its leader, which sends within this loop turn and is answered within the
///   command timeout (or the connection closes and fails them all).
///
/// Only where one call may carry any topics: not on Redis Cluster (a script's keys
/// share one slot there), not after `ASKING`, not with `--redis-min-replicas` (each
/// publish is followed by its own `WAIT`). Those send each publish alone
/// (`ClusterEngine.publishBatch`).
final class PublishBatcher: Sendable {
    let connection: RedisConnection
    private let batching: Locked<PublishBatching<Waiter>>

    init(connection: RedisConnection) {
        self.connection = connection
        batching = Locked(PublishBatching())
    }

    /// A publish handed in and not answered yet.
    struct Waiter: Sendable {
        let item: PublishItem
        let deadline: PublishDeadline
        let continuation: UnsafeContinuation<Turn, Never>
    }

    /// What a publish handed in is told.
    enum Turn: Sendable {
        /// It leads batch `number` (told at once, without suspending).
        case lead(UInt64)
        /// Its batch's leader answers it.
        case done(PublishOutcome)
    }

    /// Publishes `item` with the script call's `constants` and `hash` (the same for
    /// every publish on this connection: it serves one Redis outside Redis Cluster).
    /// `deadline`: past it, the publish is refused without being sent; `timeout`: the
    /// call's, from when it is sent.
    nonisolated(nonsending) func publish(_ item: PublishItem, constants: RedisArguments, hash: String?,
                                         until deadline: PublishDeadline, timeout: Duration) async -> PublishOutcome {
        let turn = await withUnsafeContinuation { (continuation: UnsafeContinuation<Turn, Never>) in
            let waiter = Waiter(item: item, deadline: deadline, continuation: continuation)
            if case .lead(let number) = batching.withLock({ $0.admit(waiter, bytes: item.byteCount) }) {
                continuation.resume(returning: .lead(number))
            }
        }
        switch turn {
        case .done(let outcome):
            return outcome
        case .lead(let number):
            // Behind this turn's other jobs: their publishes join the batch.
            await Task.yield()
            let batch = batching.withLock { $0.take(number) }
            return await send(batch, constants: constants, hash: hash, timeout: timeout)
        }
    }

    /// Sends `batch` (its first publish is the caller's) as one call, less the publishes
    /// whose deadline passed, then hands every other publish its outcome. Returns the caller's.
    private nonisolated(nonsending) func send(_ batch: [Waiter], constants: RedisArguments, hash: String?,
                                              timeout: Duration) async -> PublishOutcome {
        let now = PublishDeadline.now()
        let live = batch.indices.filter { batch[$0].deadline > now }
        var outcomes = [PublishOutcome](repeating: .failure(.refused(Self.lateReason)), count: batch.count)
        if !live.isEmpty {
            let answered = await ClusterEngine.publishBatch(live.map { batch[$0].item }, constants: constants, hash: hash,
                                                            on: connection, asking: false, cancellable: false, timeout: timeout)
            for (index, outcome) in zip(live, answered) { outcomes[index] = outcome }
        }
        for index in batch.indices.dropFirst() {
            batch[index].continuation.resume(returning: .done(outcomes[index]))
        }
        return outcomes[0]
    }

    static let lateReason = "the publish waited past its deadline before it could be sent to Redis (nothing was stored); retry in a moment"
}

/// One publish's outcome from Redis: its id and the other gateways' subscribers, or why it failed.
typealias PublishOutcome = Result<(UInt64, Int), PublishFailure>

/// One value to publish as the publish script takes it (`ClusterScripts.publish`).
struct PublishItem: Sendable {
    /// Its four keys.
    let keys: RedisArguments
    /// Its five arguments.
    let values: RedisArguments

    var byteCount: Int { keys.byteCount + values.byteCount }
}
