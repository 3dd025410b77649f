-- ARGV[4] fp8, [5] bloom offsets or ""
local key, field = idx(ARGV[4])
if redis.call('HEXISTS', key, field) == 1 then return 1 end
return bloom_all(split(ARGV[5])) and 1 or 0