"""The Lua scripts of :mod:`focuscrawl.frontier.redis` (kept in Python so that every packaging,
scrapyd eggs included, ships them). ``--@name`` starts a script; ``prelude`` goes in front of each.
"""

LUA = r"""
-- focuscrawl Redis frontier: every script of one file, registered once by RedisFrontier.
-- The first line of each chunk `--@name` starts a script; the shared prelude is prepended to each.
--@prelude
local P = ARGV[1]            -- key prefix, e.g. "focuscrawl:topical"
local BITS = tonumber(ARGV[2])  -- seen-bucket bits
local HMAX = tonumber(ARGV[3])  -- head size before the worse levels spill to lists

-- 14-bit order-preserving level of a double (sign, exponent, 2 mantissa bits): a level spans
-- a factor of about 1.19, so a host's queue has a few dozen levels and each list holds many
local function level(score)
  local b1, b2 = string.byte(struct.pack('>d', score), 1, 2)
  local v = math.floor((b1 * 256 + b2) / 4)
  if b1 >= 128 then return 16383 - v end
  return v + 8192
end

local function idx(fp8)
  local b1, b2, b3, b4 = string.byte(fp8, 1, 4)
  local n = ((b1 * 256 + b2) * 256 + b3) * 256 + b4
  return P .. ':s:' .. math.floor(n / 2 ^ (32 - BITS)), string.sub(fp8, 3)
end

-- zset scores hold -score; -(0) must come back as +0 so that packed scores compare equal
local function neg(z)
  local s = -z
  if s == 0 then return 0 end
  return s
end

local function seq5()
  local n = redis.call('INCR', P .. ':seq')
  local out = {}
  for i = 5, 1, -1 do
    out[i] = string.char(n % 256)
    n = math.floor(n / 256)
  end
  return table.concat(out)
end

-- rest = fplen(1) fp url "\0" json ; fp8 = first 8 bytes of fp
local function fp8_of(rest)
  return string.sub(rest, 2, 9)
end

local function live(rest, score8)
  local key, field = idx(fp8_of(rest))
  return redis.call('HGET', key, field) == score8
end

-- put the host in the hosts zset at its best live head entry (dropping stale tops)
local function update_top(host)
  local head = P .. ':h:' .. host
  while true do
    local top = redis.call('ZRANGE', head, 0, 0, 'WITHSCORES')
    if #top == 0 then
      local lv = redis.call('ZRANGE', P .. ':lv:' .. host, -1, -1)
      if #lv == 0 then
        local old = redis.call('HGET', P .. ':ht', host)
        if old then redis.call('ZREM', P .. ':hosts', old) end
        redis.call('HDEL', P .. ':ht', host)
        redis.call('HDEL', P .. ':thr', host)
        return
      end
      -- head empty: the best level list becomes the head (its entries beat every other list)
      local lkey = P .. ':l:' .. host .. ':' .. lv[1]
      local items = redis.call('LRANGE', lkey, 0, -1)
      for _, e in ipairs(items) do
        local score = struct.unpack('>d', string.sub(e, 1, 8))
        redis.call('ZADD', head, -score, seq5() .. string.sub(e, 9))
      end
      redis.call('DEL', lkey)
      redis.call('ZREM', P .. ':lv:' .. host, lv[1])
      redis.call('HSET', P .. ':thr', host, lv[1])
    else
      local member, z = top[1], tonumber(top[2])
      local rest = string.sub(member, 6)
      if live(rest, struct.pack('>d', neg(z))) then
        local entry = string.sub(member, 1, 5) .. host
        local old = redis.call('HGET', P .. ':ht', host)
        if old ~= entry then
          if old then redis.call('ZREM', P .. ':hosts', old) end
          redis.call('HSET', P .. ':ht', host, entry)
        end
        redis.call('ZADD', P .. ':hosts', z, entry)
        return
      end
      redis.call('ZREM', head, member)  -- stale: upgraded since, or already popped
    end
  end
end

-- move head entries of levels below the median's level out to per-level lists
local function spill(host)
  local head = P .. ':h:' .. host
  local n = redis.call('ZCARD', head)
  if n <= HMAX then return end
  local mid = math.floor(n / 2)
  local m = redis.call('ZRANGE', head, mid, mid, 'WITHSCORES')
  local L = level(neg(tonumber(m[2])))
  local last = redis.call('ZRANGE', head, -1, -1, 'WITHSCORES')
  if level(neg(tonumber(last[2]))) >= L then return end  -- one level (e.g. ties): nothing to move
  local tail = redis.call('ZRANGE', head, mid, -1, 'WITHSCORES')
  for i = 1, #tail, 2 do
    local score = neg(tonumber(tail[i + 1]))
    local lv = level(score)
    if lv < L then
      redis.call('ZREM', head, tail[i])
      redis.call('RPUSH', P .. ':l:' .. host .. ':' .. lv, struct.pack('>d', score) .. string.sub(tail[i], 6))
      redis.call('ZADD', P .. ':lv:' .. host, lv, lv)
    end
  end
  redis.call('HSET', P .. ':thr', host, L)
end

local function insert(host, score, rest)
  local lv = level(score)
  local thr = tonumber(redis.call('HGET', P .. ':thr', host) or '-1')
  if lv >= thr then
    redis.call('ZADD', P .. ':h:' .. host, -score, seq5() .. rest)
    spill(host)
    update_top(host)
  else
    redis.call('RPUSH', P .. ':l:' .. host .. ':' .. lv, struct.pack('>d', score) .. rest)
    redis.call('ZADD', P .. ':lv:' .. host, lv, lv)
  end
end

local function bloom_all(offsets)
  for _, off in ipairs(offsets) do
    local k, o = string.match(off, '^(%d+):(%d+)$')
    if redis.call('GETBIT', P .. ':bloom:' .. k, o) == 0 then return false end
  end
  return #offsets > 0
end

local function mark_seen(key, field, offsets)
  if #offsets > 0 then
    redis.call('HDEL', key, field)
    for _, off in ipairs(offsets) do
      local k, o = string.match(off, '^(%d+):(%d+)$')
      redis.call('SETBIT', P .. ':bloom:' .. k, o, 1)
    end
  else
    redis.call('HSET', key, field, '')
  end
end

-- pop the best live entry of host into the in-flight set; returns {rest, packed score} or nil
local function pop_host(host, lease)
  local head = P .. ':h:' .. host
  while true do
    local top = redis.call('ZPOPMIN', head)
    if #top == 0 then
      update_top(host)  -- refills the head from the best level list, if any
      if redis.call('ZCARD', head) == 0 then return nil end
    else
      local member, z = top[1], tonumber(top[2])
      local rest = string.sub(member, 6)
      local score8 = struct.pack('>d', neg(z))
      local key, field = idx(fp8_of(rest))
      if redis.call('HGET', key, field) == score8 then
        redis.call('HSET', key, field, '')  -- seen; ack turns it into Bloom bits when enabled
        redis.call('DECR', P .. ':n')
        local t = redis.call('TIME')
        local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
        local fp8 = fp8_of(rest)
        redis.call('ZADD', P .. ':lease', now + lease, fp8)
        redis.call('HSET', P .. ':inflight', fp8, string.char(#host) .. host .. score8 .. rest)
        update_top(host)
        return {rest, score8}
      end
    end
  end
end

local function top_hosts(start, count)
  local out = {}
  for _, m in ipairs(redis.call('ZRANGE', P .. ':hosts', start, start + count - 1)) do
    out[#out + 1] = string.sub(m, 6)
  end
  return out
end

local function split(s)
  local out = {}
  for part in string.gmatch(s, '[^,]+') do out[#out + 1] = part end
  return out
end

local function push_one(host, score, rest, force, offsets)
  local key, field = idx(fp8_of(rest))
  local score8 = struct.pack('>d', score)
  local v = redis.call('HGET', key, field)
  local result
  if v and v ~= '' then
    if struct.unpack('>d', v) >= score then return 'queued' end
    result = 'upgraded'
  elseif (v == '' or bloom_all(split(offsets))) and not force then
    return 'seen'
  else
    result = 'added'
    redis.call('INCR', P .. ':n')
  end
  redis.call('HSET', key, field, score8)
  insert(host, score, rest)
  return result
end

--@push
-- ARGV[4] host, [5] score, [6] rest, [7] force "1"/"0", [8] bloom offsets "k:o,k:o" or ""
return push_one(ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7] == '1', ARGV[8])

--@pushmany
-- ARGV[4..] groups of five, as push's ARGV[4..8]; returns the results in order
local out = {}
for i = 4, #ARGV, 5 do
  out[#out + 1] = push_one(ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3] == '1', ARGV[i + 4])
end
return out

--@pop
-- ARGV[4] host, [5] lease seconds; returns {rest, packed score} of the best live entry
return pop_host(ARGV[4], tonumber(ARGV[5])) or false

--@popbest
-- ARGV[4] lease seconds, [5] hosts per reply, [6..] pairs host, "1" (busy) or "0" (free):
-- pops from the best host the caller said is free, scanning past the busy ones. Returns
-- {"!", host, rest, packed score, top hosts...} (the top hosts after it, for the next call);
-- {"?", hosts...} when it met a host the caller said nothing about (the hosts from there
-- on: ask and call again); false when every queued host is busy (or nothing is queued)
local lease, count = tonumber(ARGV[4]), tonumber(ARGV[5])
local known = {}
for i = 6, #ARGV, 2 do known[ARGV[i]] = ARGV[i + 1] end
local start = 0
while true do
  local hosts = top_hosts(start, count)
  if #hosts == 0 then return false end
  local rescan = false
  for i, host in ipairs(hosts) do
    local k = known[host]
    if k == nil then
      local out = {'?'}
      for j = i, #hosts do out[#out + 1] = hosts[j] end
      return out
    end
    if k == '0' then
      local got = pop_host(host, lease)
      if got then
        local out = {'!', host, got[1], got[2]}
        for _, h in ipairs(top_hosts(0, count)) do out[#out + 1] = h end
        return out
      end
      known[host] = '1'  -- its entries were all stale: it left the hosts zset, scan again
      rescan = true
      break
    end
  end
  if rescan then start = 0 else start = start + #hosts end
end

--@ack
-- ARGV[4] fp8, [5] bloom offsets or ""
local fp8 = ARGV[4]
redis.call('ZREM', P .. ':lease', fp8)
redis.call('HDEL', P .. ':inflight', fp8)
local key, field = idx(fp8)
local v = redis.call('HGET', key, field)
if v and v ~= '' then
  redis.call('DECR', P .. ':n')  -- re-queued after its lease expired, then acked: drop the copy
end
if v then mark_seen(key, field, split(ARGV[5])) end
return v and 1 or 0

--@requeue
-- ARGV[4] batch size; returns how many expired leases went back to the frontier
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1e6
local due = redis.call('ZRANGEBYSCORE', P .. ':lease', '-inf', now, 'LIMIT', 0, tonumber(ARGV[4]))
local n = 0
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
      redis.call('HSET', key, field, score8)
      redis.call('INCR', P .. ':n')
      insert(host, struct.unpack('>d', score8), rest)
      n = n + 1
    end
  end
end
if n > 0 then redis.call('HINCRBY', P .. ':stats', 'frontier/redelivered', n) end
return n

--@release
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

--@seen
-- ARGV[4] fp8, [5] bloom offsets or ""
local key, field = idx(ARGV[4])
if redis.call('HEXISTS', key, field) == 1 then return 1 end
return bloom_all(split(ARGV[5])) and 1 or 0
"""
