-- ARGV[4] lease seconds, [5] hosts per reply, [6] "1" or "0" (the caller holds a re-delivered
-- entry: pass over hosts whose best entry is one too), [7..] pairs host, "1" (busy) or "0"
-- (free): pops from the best host the caller said is free, scanning past the busy ones. Returns
-- {"!", host, rest, packed score, top hosts...} (the top hosts after it, for the next call);
-- {"?", hosts...} when it met a host the caller said nothing about (the hosts from there
-- on: ask and call again); false when every queued host is busy (or nothing is queued)
local lease, count, suspects = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'
local known = {}
for i = 7, #ARGV, 2 do known[ARGV[i]] = ARGV[i + 1] end
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
      local got = pop_host(host, lease, suspects)
      if got then
        local out = {'!', host, got[1], got[2]}
        for _, h in ipairs(top_hosts(0, count)) do out[#out + 1] = h end
        return out
      end
      known[host] = '1'  -- all stale (it left the hosts zset) or a suspect held: scan again
      rescan = true
      break
    end
  end
  if rescan then start = 0 else start = start + #hosts end
end
