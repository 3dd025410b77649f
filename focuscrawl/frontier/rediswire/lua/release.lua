-- ARGV[4] fp8: a popped, unacked entry goes back to the frontier now (a worker that stops
-- holding an entry it popped ahead); returns 1 when it went back
local fp8 = ARGV[4]
local e = redis.call('HGET', P .. ':inflight', fp8)
redis.call('ZREM', P .. ':lease', fp8)
redis.call('HDEL', P .. ':inflight', fp8)
if not e then return 0 end
local hl = string.byte(e, 1)
local host = string.sub(e, 2, 1 + hl)
local score8 = string.sub(e, 2 + hl, 9 + hl)
local rest = string.sub(e, 10 + hl)
local key, field = idx(fp8)
if redis.call('HGET', key, field) ~= '' then return 0 end
redis.call('HSET', key, field, score8)
redis.call('INCR', P .. ':n')
insert(host, struct.unpack('>d', score8), rest)
return 1
