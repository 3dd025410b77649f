-- ARGV[4] lease seconds, [5..] fp8 of entries this worker holds: their leases run from now
-- (those still leased: an entry acknowledged or re-queued meanwhile is left alone)
local t = redis.call('TIME')
local deadline = tonumber(t[1]) + tonumber(t[2]) / 1e6 + tonumber(ARGV[4])
local n = 0
for i = 5, #ARGV do
  if redis.call('ZSCORE', P .. ':lease', ARGV[i]) then
    redis.call('ZADD', P .. ':lease', 'XX', deadline, ARGV[i])
    n = n + 1
  end
end
return n
