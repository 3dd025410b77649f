-- ARGV[4] batch size, [5] attempts at which an entry is quarantined (0: never). An expired lease
-- is a delivery that was never acknowledged; it counts as an attempt only when a dead worker's
-- work mark blamed the entry (P:guilty, the blame script): its deaths go in the entry's flags
-- byte, or it is quarantined. A bystander comes back with its count unchanged. Returns {expired leases handled, re-queued, seconds until the earliest lease left
-- expires (a string; -1: no lease left), fp8, quarantine value, ...}
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local due = redis.call('ZRANGEBYSCORE', P .. ':lease', '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
local limit = tonumber(ARGV[5])
local n = 0
local out = {#due, 0, -1}
for _, fp8 in ipairs(due) do
  redis.call('ZREM', P .. ':lease', fp8)
  local e = redis.call('HGET', P .. ':inflight', fp8)
  redis.call('HDEL', P .. ':inflight', fp8)
  if e then
    local hl = string.byte(e, 1)
    local host = string.sub(e, 2, 1 + hl)
    local score8 = string.sub(e, 2 + hl, 9 + hl)
    local rest = string.sub(e, 10 + hl)
    local key, field = idx(fp8)
    if redis.call('HGET', key, field) == '' then
      local tries = math.min(math.max(attempts_of(rest),
        tonumber(redis.call('HGET', P .. ':guilty', fp8) or 0)), 31)
      if limit > 0 and tries >= limit then
        -- a poison page: stays seen (a link found to it again is a duplicate), recorded
        local value = struct.pack('>Bd', tries, now) .. e
        redis.call('HDEL', P .. ':attempts', fp8)
        redis.call('HDEL', P .. ':guilty', fp8)
        redis.call('HSET', P .. ':quarantine', fp8, value)
        redis.call('HINCRBY', P .. ':stats', 'quarantine/urls', 1)
        out[#out + 1] = fp8
        out[#out + 1] = value
      else
        if tries > 0 then
          rest = with_attempts(rest, tries)
          redis.call('HSET', P .. ':attempts', fp8, tries)
        end
        redis.call('HSET', key, field, score8)
        redis.call('INCR', P .. ':n')
        insert(host, struct.unpack('>d', score8), rest)
        n = n + 1
      end
    end
  end
end
if n > 0 then redis.call('HINCRBY', P .. ':stats', 'frontier/redelivered', n) end
out[2] = n
local first = redis.call('ZRANGE', P .. ':lease', 0, 0, 'WITHSCORES')
if #first > 0 then out[3] = tostring(math.max(0, tonumber(first[2]) - now)) end
return out
