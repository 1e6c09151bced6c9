import RedisClient
import StreamHub

/// Publishing: one script on the topic's shard assigns the id, stores the value and
/// announces it; with `minReplicas`, a `WAIT` on the same connection right after it
/// confirms that enough replicas hold it before the publish is acknowledged.
///
/// Replies first: the publish runs on its caller's executor and touches the engine
/// only for the synchronous steps before and after the script (`onEngine`: in place on
/// the engine's loop, else one hop), so the script's reply is handled by the job that
/// reads it: the value goes into this gateway's mirror at once (its subscribers are
/// readied without waiting for the pub/sub echo, which is then skipped as held), and
/// the POST's reply is written in that same job, before the loop's turn-end writes
/// fan the value out (as in memory mode).
///
/// On Redis Cluster a refusal of the node is followed as the cluster says: `MOVED` →
/// the slot map read again and the publish tried once more on the new owner; `ASK` →
/// the script sent after `ASKING` to the node importing the slot (no refresh);
/// `TRYAGAIN` (a multi-key script while its slot migrates) → tried again every 25 ms
/// until the command timeout; `CLUSTERDOWN`/`READONLY` → the map is read again and
/// the publish answered 503 (with `Retry-After`).
extension ClusterEngine {
    public nonisolated(nonsending) func publish(topic: String, channel: Channel, data: String,
                                                event: String?) async throws(PublishError) -> PublishResult {
        let deadline = PublishDeadline.after(configuration.commandTimeout)
        var attempt = PublishAttempt()
        while true {
            let asking = attempt.asking
            let plan = try await onEngine((topic, channel, data, event, asking)) { engine, value in
                engine.planPublish(topic: value.0, channel: value.1, data: value.2, event: value.3, asking: value.4)
            }.get()
            switch await store(plan, until: deadline) {
            case .success(let (id, others)):
                let message = ClusterMessage(channel: channel, id: id, event: event, data: data)
                return await onEngine((message, topic, others)) { engine, value in
                    engine.published(value.0, to: value.1, others: value.2)
                }
            case .failure(let failure):
                attempt = try await publishFailed(failure, plan: plan, attempt: attempt, until: deadline).get()
            }
        }
    }

    /// Runs `body(engine, arguments)` on the engine: in place when the caller is on the
    /// engine's executor's thread (its event loop, where no job of the engine can run
    /// meanwhile), else after a hop there. `body` should capture nothing (its inputs come
    /// as `arguments`), so that no closure context is allocated (`runInPlace`).
    nonisolated(nonsending) func onEngine<Arguments: Sendable, T: Sendable>(
        _ arguments: Arguments, _ body: @escaping @Sendable (isolated ClusterEngine, Arguments) -> T
    ) async -> T {
        if let result = runInPlace(isolatedBy: executor, arguments, body) { return result }
        return await runOnEngine(arguments, body)
    }

    private func runOnEngine<Arguments: Sendable, T: Sendable>(
        _ arguments: Arguments, _ body: @Sendable (isolated ClusterEngine, Arguments) -> T
    ) -> T {
        body(self, arguments)
    }

    /// Where a publish goes: the shard, its link, the script's keys and arguments.
    private func planPublish(topic: String, channel: Channel, data: String, event: String?,
                             asking: ClusterAddress?) -> Result<PublishPlan, PublishError> {
        guard !isShutdown else { return .failure(.shutdown) }
        // The new id is above the last this gateway holds, and while it follows the topic
        // the last it acknowledged (`FollowedTopic.idsAbove`, never below the hub's: the
        // engine is the hub's only writer, and moves the topic's ids first): ids never go
        // backwards for its subscribers, and it hands out none of its acknowledged ones again.
        let ids = followed[topic]?.idsAbove ?? hub.assumeIsolatedUnchecked(topic) { hub, topic in hub.lastIDs(topic: topic) }
        let above = channel == .state ? ids.state : ids.events
        let target = asking.flatMap { address in
            shards.indices.first { shards[$0].clusterMaster?.address == address && !shards[$0].retired }
        } ?? (asking == nil ? routing.shard(of: topic) : nil)
        guard let index = target else {
            if asking == nil { requestMapRefresh() }
            return .failure(.unavailable(reason: asking.map { "the Redis Cluster node \($0) importing the topic's slot is not linked" }
                                         ?? "no Redis Cluster master serves the topic's slot now (a failover or reshard); retry in a moment"))
        }
        guard let link = link(shard: index), readiness.isReady(shard: index), link.publisher.isOpen else {
            return .failure(.unavailable(reason: readiness.reason(shard: index) ?? "the connection to the cluster's Redis was lost"))
        }
        if shards[index].publishConstants == nil {
            shards[index].publishConstants = Self.publishConstants(configuration: configuration, gatewayID: configuration.gatewayID,
                                                                   shardKeys: shards[index].keys, epoch: shards[index].knownEpoch,
                                                                   sharded: routing.isCluster)
        }
        let item = Self.publishItem(topic: topic, channel: channel, data: data, event: event, above: above,
                                    sharded: routing.isCluster, database: configuration.redis.database)
        return .success(PublishPlan(shard: index, link: link, hash: scriptHashes["publish"], item: item,
                                    constants: shards[index].publishConstants!, asking: asking != nil,
                                    batched: !routing.isCluster && asking == nil && configuration.minReplicas == 0))
    }

    /// One value's keys and arguments for the publish script (`ClusterScripts.publish`).
    nonisolated static func publishItem(topic: String, channel: Channel, data: String, event: String?,
                                        above: UInt64, sharded: Bool, database: Int) -> PublishItem {
        var keys = RedisArguments(reservingCapacity: 4 * topic.utf8.count + 96)
        ClusterKeys.appendPublishKeys(topic: topic, channel: channel, to: &keys)
        var values = RedisArguments(reservingCapacity: topic.utf8.count + data.utf8.count + (event?.utf8.count ?? 0) + 96)
        values.append(channel.rawValue)
        values.append(data)
        values.append(event ?? "")
        values.append(Int(above))
        ClusterKeys.appendChannel(topic: topic, sharded: sharded, database: database, to: &values)
        return PublishItem(keys: keys, values: values)
    }

    /// The publish script's key count, keys and arguments for `items`, in order
    /// (`constants`: from `publishConstants`, for their shard).
    nonisolated static func publishBatchArguments(_ items: [PublishItem], constants: RedisArguments) -> RedisArguments {
        var arguments = RedisArguments(reservingCapacity: items.reduce(constants.byteCount + 16) { $0 + $1.byteCount })
        arguments.append(4 * items.count)
        for item in items { arguments.append(contentsOf: item.keys) }
        arguments.append(contentsOf: constants)
        for item in items { arguments.append(contentsOf: item.values) }
        return arguments
    }

    /// Runs the publish script for `items` on `connection`: each one's id and the
    /// other gateways' subscribers, or its refusal (the call's error for all of them).
    /// `cancellable` false: sent and answered even if the calling task is cancelled.
    nonisolated(nonsending) static func publishBatch(_ items: [PublishItem], constants: RedisArguments, hash: String?,
                                                     on connection: RedisConnection, asking: Bool, cancellable: Bool = true,
                                                     timeout: Duration) async -> [PublishOutcome] {
        let reply: RedisValue
        do throws(RedisError) {
            reply = try await evaluate(ClusterScripts.publish, hash: hash, on: connection,
                                       scriptArguments: publishBatchArguments(items, constants: constants),
                                       asking: asking, cancellable: cancellable, timeout: timeout)
        } catch {
            return Array(repeating: .failure(.redis(error)), count: items.count)
        }
        let unexpected = PublishOutcome.failure(.refused("Redis gave an unexpected reply to the publish script"))
        guard let parts = reply.array, parts.count == 2 * items.count else {
            return Array(repeating: unexpected, count: items.count)
        }
        return items.indices.map { index in
            switch (parts[2 * index].integer, parts[2 * index + 1]) {
            case (let id?, let subscribers) where id > 0:
                guard let subscribers = subscribers.integer else { return unexpected }
                return .success((UInt64(id), Int(max(0, subscribers))))
            case (0?, let refusal):
                return .failure(.redis(.server(refusal.string ?? "the publish script failed")))
            default:
                return unexpected
            }
        }
    }

    /// The publish script's arguments shared by every publish of a gateway to one
    /// shard (the first eight ARGV of `ClusterScripts.publish`); `epoch`: the shard's as
    /// this gateway's link found it (`RedisShard.knownEpoch`).
    nonisolated static func publishConstants(configuration: ClusterConfiguration, gatewayID: String,
                                             shardKeys: ShardKeys, epoch: String?, sharded: Bool) -> RedisArguments {
        var constants = RedisArguments()
        constants.append(configuration.hub.replayCount)
        constants.append(Int(configuration.replayMaxAgeMilliseconds))
        constants.append(shardKeys.gatewayPrefix)
        constants.append(gatewayID)
        constants.append(shardKeys.publishPause)
        constants.append(sharded ? "SPUBLISH" : "PUBLISH")
        constants.append(shardKeys.epoch)
        constants.append(epoch ?? "")  // None (not linked): every publish is refused, and the link made anew.
        return constants
    }

    /// Runs the script (and with `--redis-min-replicas` its `WAIT`, one publish at a time
    /// per shard: a `WAIT` blocks its connection, others pipelined behind it would wait
    /// out its timeout). Returns the id and the other gateways' subscribers.
    private nonisolated(nonsending) func store(_ plan: PublishPlan,
                                               until deadline: PublishDeadline) async -> PublishOutcome {
        guard configuration.minReplicas > 0 else { return await runScript(plan, until: deadline) }
        guard await takeReplicaTurn(shard: plan.shard, until: deadline) else {
            let reason = !deadline.isAhead()
                ? "waited for the publishes before it on the shard (--redis-min-replicas: one WAIT at a time) "
                  + "past the command timeout (\(configuration.commandTimeout)); retry in a moment"
                : await replicasShortText(shard: plan.shard)
            return .failure(.refused(reason))
        }
        var short: Int?
        let stored = await runScript(plan, until: deadline)
        var outcome = stored
        if case .success = stored {
            do throws(RedisError) {
                let acknowledged = try await replicasHolding(plan.link)
                if acknowledged < configuration.minReplicas {
                    short = acknowledged
                    outcome = .failure(.refused(
                        "stored on the Redis master but only \(acknowledged) of the \(configuration.minReplicas) "
                        + "replicas required (--redis-min-replicas) confirmed it within "
                        + "\(configuration.minReplicasTimeout); it may be delivered, and may be lost if the master fails"))
                }
            } catch {
                outcome = .failure(.redis(error))
            }
        }
        await onEngine((plan.shard, short)) { engine, value in engine.releaseReplicaTurn(shard: value.0, short: value.1) }
        return outcome
    }

    /// The script for the plan's value: in a batch with other publishes of this link
    /// (`PublishBatcher`) where the plan allows, else alone.
    private nonisolated(nonsending) func runScript(_ plan: PublishPlan,
                                                   until deadline: PublishDeadline) async -> PublishOutcome {
        if plan.batched {
            return await plan.link.publishes.publish(plan.item, constants: plan.constants, hash: plan.hash, until: deadline,
                                                     timeout: configuration.commandTimeout)
        }
        return await Self.publishBatch([plan.item], constants: plan.constants, hash: plan.hash, on: plan.link.publisher,
                                        asking: plan.asking, timeout: configuration.commandTimeout)[0]
    }

    /// The value is stored with `message.id`: into the mirror at once when next in id
    /// order (`FollowedTopic.stored`), and the reply with every gateway's subscribers
    /// (the others' as they last wrote them, at most a second old; this one's as they are).
    private func published(_ message: ClusterMessage, to topic: String, others: Int) -> PublishResult {
        counters.published(message.channel)
        if followed[topic] != nil, case .apply = followed[topic]!.stored(message) {
            mirror(message, of: topic)
        }
        let local = subscriberCount(topic: topic, channel: message.channel)
        return PublishResult(id: message.id, subscribers: others + local)
    }

    static let epochLostReason = "the cluster's Redis lost its data: the gateways restore the ids; retry in a moment (nothing was stored)"

    /// After a failed try: the next try (a redirection or `TRYAGAIN` on Redis Cluster), or the refusal.
    /// Never inlined into `publish`: its clock values (the `TRYAGAIN` sleep's) would be
    /// task allocations at every publish's start there (`PublishDeadline`).
    @inline(never)
    private func publishFailed(_ failure: PublishFailure, plan: PublishPlan, attempt: PublishAttempt,
                               until deadline: PublishDeadline) async -> Result<PublishAttempt, PublishError> {
        let error: RedisError
        switch failure {
        case .refused(let reason): return .failure(.unavailable(reason: reason))
        case .redis(let redisError): error = redisError
        }
        if routing.isCluster, let redirection = ClusterRedirection(error) {
            switch redirection.kind {
            case .moved where !attempt.moved:
                guard await refreshMapNow(until: deadline.instant) else {
                    return .failure(.unavailable(reason: "the topic's slot moved to another Redis Cluster master, and the "
                                                 + "new slot map was not read within the command timeout; retry in a moment"))
                }
                return .success(PublishAttempt(moved: true, asking: nil))
            case .ask where attempt.asking == nil:
                return .success(PublishAttempt(moved: attempt.moved, asking: redirection.address))
            default:
                break
            }
        }
        if routing.isCluster, let refusal = ClusterRefusal(error) {
            switch refusal {
            case .tryAgain where deadline.isAhead(by: .milliseconds(25)):
                try? await Task.sleep(for: .milliseconds(25))
                return .success(PublishAttempt(moved: attempt.moved, asking: nil))
            case .tryAgain:
                return .failure(.unavailable(reason: "the topic's slot is moving between Redis Cluster masters; retry in a moment"))
            case .clusterDown, .notMaster:
                requestMapRefresh()
            }
        }
        return .failure(.unavailable(reason: refusal(error, link: plan.link, shard: plan.shard)))
    }

    /// `WAIT minReplicas` on the publishing connection: it covers every write made on
    /// it so far, this publish's included. Returns how many replicas confirmed.
    private nonisolated func replicasHolding(_ link: RedisLink) async throws(RedisError) -> Int {
        let (seconds, attoseconds) = configuration.minReplicasTimeout.components
        let milliseconds = max(1, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        let reply = try await link.publisher.command(["WAIT", String(configuration.minReplicas), String(milliseconds)],
                                                     timeout: configuration.commandTimeout + configuration.minReplicasTimeout)
        return Int(reply.integer ?? 0)
    }

    /// Why a publish's command failed, for its 503 (this refusal's own reason: another
    /// publish refused meanwhile has its own); a master turned replica (`READONLY`) is
    /// looked for again, a pause for restoring ids is noted for `/readyz`.
    private func refusal(_ error: RedisError, link: RedisLink, shard index: Int) -> String {
        switch error {
        case .server(let message) where message.hasPrefix("READONLY"):
            linkLost(link, shard: index, because: .noMaster("the node in use became a replica"))
            return "the Redis node answered READONLY: it is a replica now; finding the master again"
        case .server(let message) where message.hasPrefix("EPOCHLOST"):
            // As the heartbeat's look at the epoch would within a second (`epochHolds`);
            // said once, by the first of the batch's publishes to come here.
            if self.link(shard: index)?.generation == link.generation {
                configuration.log("\(shardName(index)): Redis lost its data under a live link (a publish found its epoch key "
                                  + "gone or another: FLUSHALL, or a restart); linking anew")
                // What the closed link's publishes still on their way are told: Redis refused
                // them too (each call checks the epoch first), so nothing of them was stored.
                shards[index].epochLostGeneration = link.generation
                linkLost(link, shard: index, because: .unreachable("Redis lost its data; the gateways restore the ids"))
            }
            return Self.epochLostReason
        case .closed where shards[index].epochLostGeneration == link.generation:
            return Self.epochLostReason
        case .server(let message) where message.hasPrefix("REFLOOR"):
            readiness.pause(shard: index, until: .now + .milliseconds(250))
            return "the cluster's Redis may have lost data: the gateways restore the ids; retry in a moment"
        case .server(let message) where message.hasPrefix("CLUSTERDOWN"):
            return "the Redis Cluster refused the publish (\(message)): a master is lost and not yet replaced; retry in a moment"
        case .server(let message):
            return "Redis refused the publish: \(message)"
        case .timedOut:
            return "the cluster's Redis did not answer within \(configuration.commandTimeout)"
        case .closed:
            return "the connection to the cluster's Redis was lost before the reply came: "
                + "the value may have been stored and delivered (a retry may publish it twice)"
        case .unreachable, .protocolError:
            return "the connection to the cluster's Redis was lost"
        case .cancelled:
            return "the publish was cancelled before Redis answered"
        }
    }
}

/// One publish's try: the shard, its link and the script's keys and arguments.
struct PublishPlan: Sendable {
    let shard: Int
    let link: RedisLink
    /// The publish script's hash from `SCRIPT LOAD` (nil: its text is sent).
    let hash: String?
    /// The value's keys and arguments.
    let item: PublishItem
    /// The script's arguments for every publish to the shard.
    let constants: RedisArguments
    /// After `ASKING`, to the node importing the topic's slot.
    let asking: Bool
    /// Whether it may go in one call with other publishes (`PublishBatcher`).
    let batched: Bool
}

/// What the tries of one publish have followed so far (each redirection once).
struct PublishAttempt: Sendable {
    var moved = false
    var asking: ClusterAddress?
}

/// Why a try of a publish failed: Redis's error (which may call for another try), or
/// a refusal with its reason.
enum PublishFailure: Error {
    case redis(RedisError)
    case refused(String)
}
