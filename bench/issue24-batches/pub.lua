local function paused(pause, prefix)
  local kind = redis.call('GET', pause)
  if not kind then return false end
  return true
end
if paused(ARGV[10], ARGV[8]) then
  return redis.error_reply('REFLOOR')
end
local channel = ARGV[1]
local id = redis.call('HINCRBY', KEYS[1], channel, 1)
local above = tonumber(ARGV[4])
if channel == 'state' then
  local held = tonumber(redis.call('HGET', KEYS[2], 'id') or '0')
  if held > above then above = held end
end
if id <= above then
  id = above + 1
  redis.call('HSET', KEYS[1], channel, string.format('%d', id))
end
local sid = string.format('%d', id)
local t = redis.call('TIME')
local ms = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
if channel == 'state' then
  redis.call('HSET', KEYS[2], 'id', sid, 'data', ARGV[2], 'event', ARGV[3])
elseif tonumber(ARGV[6]) > 0 then
  local added = redis.pcall('XADD', KEYS[3], 'MAXLEN', ARGV[6], sid .. '-0', 'd', ARGV[2], 'e', ARGV[3], 't', ms)
  redis.call('PEXPIRE', KEYS[3], ARGV[7])
end
redis.call(ARGV[11], ARGV[5], string.sub(channel, 1, 1) .. sid .. '\n' .. ARGV[3] .. '\n' .. ARGV[2])
local n = 0
local counts = redis.call('HGETALL', KEYS[4])
for i = 1, #counts, 2 do
  if counts[i] == ARGV[9] then
  elseif redis.call('EXISTS', ARGV[8] .. counts[i]) == 1 then
    n = n + tonumber(counts[i + 1])
  else
    redis.call('HDEL', KEYS[4], counts[i])
  end
end
return {id, n}
