/// The Lua scripts the cluster runs in Redis. Each runs atomically, so an id is
/// assigned, stored and announced in one step: no other gateway can see a
/// counter ahead of its value, or receive ids out of order.
enum ClusterScripts {
    /// A Lua function the scripts that must know it start with: whether publishes
    /// on this Redis pause. `pause`: the pause key (`ShardKeys.publishPause`), `prefix`:
    /// the liveness keys' (`ShardKeys.gatewayPrefix`). A pause of any value but
    /// `failover:<ms>` (an empty restart's `1`) lasts its time to live. A failover pause
    /// ends the moment every gateway of `pause:gateways` (seen on the shard within the
    /// last minute) is in `pause:raised` (its syncs raised the counters of its topics on
    /// this master). One not marked holds it while its liveness key is still there, and
    /// in any case until `<ms>` (Redis's clock: the pause's start plus
    /// `failoverPauseMinimum`), so that a gateway whose liveness lapsed during a long
    /// promotion still reaches the new master and raises before anyone publishes. The
    /// pause's time to live bounds it all. Once it ends it is deleted at once.
    static let paused = """
    local function paused(pause, prefix)
      local kind = redis.call('GET', pause)
      if not kind then return false end
      local notBefore = string.match(kind, '^failover:(%d+)$')
      local early = false
      if notBefore then
        local t = redis.call('TIME')
        early = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) < tonumber(notBefore)
      elseif kind ~= 'failover' then
        return true
      end
      local raised = pause .. ':raised'
      local gateways = redis.call('ZRANGE', pause .. ':gateways', 0, -1)
      for i = 1, #gateways do
        if redis.call('SISMEMBER', raised, gateways[i]) == 0
           and (early or redis.call('EXISTS', prefix .. gateways[i]) == 1) then
          return true
        end
      end
      redis.call('DEL', pause, raised)
      return false
    end

    """

    /// A gateway's liveness, written on linking and every heartbeat. KEYS: its liveness
    /// key, the shard's gateways (`ShardKeys.gateways`). ARGV: its id, the time to
    /// live in ms. Returns the key's previous value (nil: it had lapsed). The gateways
    /// set is what a failover pause reads to know who was live (replicated with the
    /// liveness keys to a replica that may be promoted); names not seen for a minute leave it.
    static let liveness = """
    local previous = redis.call('SET', KEYS[1], '1', 'PX', ARGV[2], 'GET')
    local t = redis.call('TIME')
    local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    redis.call('ZADD', KEYS[2], ms, ARGV[1])
    redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ms - 60000)
    return previous
    """

    /// Starts the pause after a failover unless one runs. KEYS: the pause key. ARGV:
    /// its longest time in ms, its shortest (marks cannot end it before). Returns 1 when
    /// this call started it (the marks of an earlier pause are cleared), else 0.
    static let startFailoverPause = """
    local t = redis.call('TIME')
    local notBefore = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[2])
    if redis.call('SET', KEYS[1], 'failover:' .. notBefore, 'PX', ARGV[1], 'NX') then
      redis.call('DEL', KEYS[1] .. ':raised')
      return 1
    end
    return 0
    """

    /// Whether publishes still pause, after marking the calling gateway raised when
    /// asked. KEYS: the pause key. ARGV: the liveness keys' prefix, the gateway's id,
    /// `1` to mark it raised (its syncs are done). Returns `{0, 0}` when no pause runs
    /// (any more), else `{ms left at most, 1 if this gateway is marked raised}`.
    static let pauseState = paused + """
    if ARGV[3] == '1' and redis.call('EXISTS', KEYS[1]) == 1 then
      redis.call('SADD', KEYS[1] .. ':raised', ARGV[2])
      redis.call('PEXPIRE', KEYS[1] .. ':raised', 60000)
    end
    if not paused(KEYS[1], ARGV[1]) then return {0, 0} end
    return {redis.call('PTTL', KEYS[1]), redis.call('SISMEMBER', KEYS[1] .. ':raised', ARGV[2])}
    """

    /// Publishes a batch of values, each as if alone, in order (a topic twice in a batch
    /// gets two ids in that order). KEYS: four for each value: ids, state, events, counts
    /// of its channel. ARGV: first what is the same for every publish to one shard
    /// (encoded once: `RedisShard.publishConstants`): replay count, replay age in ms,
    /// the gateway liveness key prefix, the publishing gateway's id (its own
    /// subscribers it counts itself, exactly), the pause key (`sse:refloor`, or the
    /// shard's on Redis Cluster), the announcing command (`PUBLISH`, or `SPUBLISH` on
    /// Redis Cluster: the channel is then in the topic's slot), the epoch key (`sse:epoch`,
    /// or the shard's) and the epoch the gateway linked with; then five for each value:
    /// channel (`state`/`events`), data, event name (`""` for none), the id the new one must be above (the last the publishing gateway holds or, for a topic it
    /// follows, acknowledged: ids never go backwards for its subscribers even if Redis
    /// lost the counter, and it hands out none of its acknowledged ones again), the pub/sub channel.
    /// The liveness and pause keys are the shard's own (`ShardKeys`): on Redis Cluster
    /// undeclared keys of the same node, which Redis 7 lets a script without a shebang
    /// read (there every batch is of one value: a script's keys must share a slot).
    /// Returns two elements per value: `id, subscribers of every other live gateway`,
    /// or `0, error text` when Redis refused that value's commands (the others stand).
    /// The whole batch is an error while publishes pause (`paused`: Redis came back
    /// empty, or failed over, and the gateways are raising the counters to the ids
    /// they hold: nothing is published meanwhile), and `EPOCHLOST` when the epoch is
    /// gone or another than the one the gateway linked with: Redis lost its data under a
    /// live link (`FLUSHALL`; another epoch: a gateway that never knew the old one seeded
    /// it since), which the publishing gateway could not know yet; a value stored then
    /// could take an id another gateway's subscribers already had. The gateway links
    /// anew, which starts the pause.
    /// Why batches: Redis spends about 14 µs on a call of one value and 7 µs a value
    /// in calls of 16 (`PublishBatcher`).
    static let publish = paused + """
    if paused(ARGV[5], ARGV[3]) then
      return redis.error_reply('REFLOOR Redis came back empty; the gateways are restoring the ids')
    end
    if redis.call('GET', ARGV[7]) ~= ARGV[8] then
      return redis.error_reply('EPOCHLOST Redis lost its data (its epoch key is gone or another)')
    end
    local t = redis.call('TIME')
    local ms = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
    local function publish(k, a)
      local channel = ARGV[a + 1]
      local id = redis.call('HINCRBY', KEYS[k + 1], channel, 1)
      local above = tonumber(ARGV[a + 4])
      if channel == 'state' then
        local held = tonumber(redis.call('HGET', KEYS[k + 2], 'id') or '0')
        if held > above then above = held end
      end
      if id <= above then
        id = above + 1
        redis.call('HSET', KEYS[k + 1], channel, string.format('%d', id))
      end
      local sid = string.format('%d', id)
      if channel == 'state' then
        redis.call('HSET', KEYS[k + 2], 'id', sid, 'data', ARGV[a + 2], 'event', ARGV[a + 3])
      elseif tonumber(ARGV[1]) > 0 then
        local added = redis.pcall('XADD', KEYS[k + 3], 'MAXLEN', '~', ARGV[1], sid .. '-0', 'd', ARGV[a + 2], 'e', ARGV[a + 3], 't', ms)
        if type(added) == 'table' and added.err then
          -- The window holds a newer id than the counter (the counter was lost): go past it.
          local last = redis.call('XREVRANGE', KEYS[k + 3], '+', '-', 'COUNT', 1)
          id = tonumber(string.match(last[1][1], '^(%d+)')) + 1
          sid = string.format('%d', id)
          redis.call('HSET', KEYS[k + 1], channel, sid)
          redis.call('XADD', KEYS[k + 3], 'MAXLEN', '~', ARGV[1], sid .. '-0', 'd', ARGV[a + 2], 'e', ARGV[a + 3], 't', ms)
        end
        redis.call('PEXPIRE', KEYS[k + 3], ARGV[2])
      end
      redis.call(ARGV[6], ARGV[a + 5], string.sub(channel, 1, 1) .. sid .. '\\n' .. ARGV[a + 3] .. '\\n' .. ARGV[a + 2])
      local n = 0
      local counts = redis.call('HGETALL', KEYS[k + 4])
      for i = 1, #counts, 2 do
        if counts[i] == ARGV[4] then
          -- This gateway's own: it adds them itself.
        elseif redis.call('EXISTS', ARGV[3] .. counts[i]) == 1 then
          n = n + tonumber(counts[i + 1])
        else
          redis.call('HDEL', KEYS[k + 4], counts[i])
        end
      end
      return id, n
    end
    local replies = {}
    for p = 0, #KEYS / 4 - 1 do
      local ok, id, n = pcall(publish, p * 4, 8 + p * 5)
      if ok then
        replies[#replies + 1] = id
        replies[#replies + 1] = n
      else
        replies[#replies + 1] = 0
        replies[#replies + 1] = type(id) == 'table' and id.err or tostring(id)
      end
    end
    return replies
    """

    /// What a gateway needs to follow a topic from where it stands. KEYS: ids,
    /// state, events. ARGV: the state id and the events id the gateway holds.
    /// Returns `{last state id, last events id, Redis time in ms, state or nil,
    /// events after the held id}`: the state as `{id, data, event}` only when newer
    /// than the held one, the events as stream entries.
    static let sync = """
    local ids = redis.call('HMGET', KEYS[1], 'state', 'events')
    local t = redis.call('TIME')
    local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
    local state = false
    local held = tonumber(redis.call('HGET', KEYS[2], 'id') or '0')
    if held > tonumber(ARGV[1]) then
      state = redis.call('HMGET', KEYS[2], 'id', 'data', 'event')
    end
    local entries = {}
    if tonumber(ids[2] or '0') > tonumber(ARGV[2]) then
      entries = redis.call('XRANGE', KEYS[3], '(' .. ARGV[2] .. '-0', '+')
    end
    return {ids[1] or '0', ids[2] or '0', ms, state, entries}
    """

    /// Raises a topic's counters to at least the given ids (a gateway holding or having
    /// acknowledged newer ids than Redis: Redis came back empty, or a promoted replica
    /// lacks the last publishes). KEYS: ids. ARGV: state id, events id.
    static let raiseIDs = """
    local fields = {'state', 'events'}
    for i = 1, 2 do
      local wanted = tonumber(ARGV[i])
      if tonumber(redis.call('HGET', KEYS[1], fields[i]) or '0') < wanted then
        redis.call('HSET', KEYS[1], fields[i], ARGV[i])
      end
    end
    return 1
    """
}
