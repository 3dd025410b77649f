-- ARGV[4] fp8: a dead worker's work mark named this entry (it died working on it). One more
-- death in P:guilty; if the entry is still leased (by that dead worker) its lease is due now,
-- so the next requeue counts it. Returns the deaths counted.
local n = redis.call('HINCRBY', P .. ':guilty', ARGV[4], 1)
if redis.call('HEXISTS', P .. ':inflight', ARGV[4]) == 1 then
  redis.call('ZADD', P .. ':lease', 0, ARGV[4])
end
return n
