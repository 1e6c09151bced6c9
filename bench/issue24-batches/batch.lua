local function paused(pause, prefix)
  local kind = redis.call('GET', pause)
  if not kind then return false end
  return true
end
if paused(ARGV[5], ARGV[3]) then
  return redis.error_reply('REFLOOR')
end
local t = redis.call('TIME')
local ms = string.format('%d', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
local out = {}
local n = (#ARGV - 6) / 5
for p = 0, n - 1 do
  local k = p * 4
  local a = 6 + p * 5
  local channel = ARGV[a + 1]
  local id = redis.call('HINCRBY', KEYS[k+1], channel, 1)
  local above = tonumber(ARGV[a+4])
  if id <= above then
    id = above + 1
    redis.call('HSET', KEYS[k+1], channel, string.format('%d', id))
  end
  local sid = string.format('%d', id)
  if channel == 'state' then
    redis.call('HSET', KEYS[k+2], 'id', sid, 'data', ARGV[a+2], 'event', ARGV[a+3])
  else
    redis.call('XADD', KEYS[k+3], 'MAXLEN', ARGV[1], sid .. '-0', 'd', ARGV[a+2], 'e', ARGV[a+3], 't', ms)
    redis.call('PEXPIRE', KEYS[k+3], ARGV[2])
  end
  redis.call(ARGV[6], ARGV[a+5], string.sub(channel, 1, 1) .. sid .. '\n' .. ARGV[a+3] .. '\n' .. ARGV[a+2])
  local c = 0
  local counts = redis.call('HGETALL', KEYS[k+4])
  for i = 1, #counts, 2 do
    if counts[i] == ARGV[4] then
    elseif redis.call('EXISTS', ARGV[3] .. counts[i]) == 1 then
      c = c + tonumber(counts[i + 1])
    end
  end
  out[#out+1] = id
  out[#out+1] = c
end
return out
