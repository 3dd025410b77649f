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

-- rest = fplen(1) fp flags(1) deflated ; fp8 = first 8 bytes of fp
local function fp8_of(rest)
  return string.sub(rest, 2, 9)
end

-- flags >> 3: deliveries of the entry that were never acknowledged (its worker died); set by
-- requeue, and also kept in P:attempts (fp8 -> count) so that an upgrade, which queues the
-- pusher's copy of the entry, keeps it
local function attempts_of(rest)
  return math.floor(string.byte(rest, 2 + string.byte(rest, 1)) / 8)
end

local function with_attempts(rest, tries)
  local fl = string.byte(rest, 1)
  local flags = string.byte(rest, 2 + fl)
  return string.sub(rest, 1, 1 + fl) .. string.char(flags % 8 + tries * 8) .. string.sub(rest, 3 + fl)
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
-- (nil too when the best one is a re-delivered entry and suspects is false: left in place)
local function pop_host(host, lease, suspects)
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
        if not suspects and attempts_of(rest) > 0 then
          redis.call('ZADD', head, z, member)  -- the worker holds a suspect already: put back
          return nil
        end
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

-- the popped entry fp8 is done: its lease released, it stays seen (Bloom bits when enabled)
local function ack_one(fp8, offsets)
  redis.call('ZREM', P .. ':lease', fp8)
  redis.call('HDEL', P .. ':inflight', fp8)
  redis.call('HDEL', P .. ':attempts', fp8)
  redis.call('HDEL', P .. ':guilty', fp8)
  local key, field = idx(fp8)
  local v = redis.call('HGET', key, field)
  if v and v ~= '' then
    redis.call('DECR', P .. ':n')  -- re-queued after its lease expired, then acked: drop the copy
  end
  if v then mark_seen(key, field, split(offsets)) end
  return v and 1 or 0
end

local function push_one(host, score, rest, force, offsets)
  if force and redis.call('HEXISTS', P .. ':quarantine', fp8_of(rest)) == 1 then
    return 'seen'  -- quarantined: never queued again, not even by a dont_filter request
  end
  local key, field = idx(fp8_of(rest))
  local score8 = struct.pack('>d', score)
  local v = redis.call('HGET', key, field)
  local result
  if v and v ~= '' then
    if struct.unpack('>d', v) >= score then return 'queued' end
    result = 'upgraded'
    local tries = redis.call('HGET', P .. ':attempts', fp8_of(rest))
    if tries then rest = with_attempts(rest, tonumber(tries)) end
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
