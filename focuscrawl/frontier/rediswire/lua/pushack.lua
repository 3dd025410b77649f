-- ARGV[4] "1": the acks first (a redirect or retry replacing its parent), "0": the pushes
-- first (a page's links, then the page); [5] number of acks n; then n pairs fp8, bloom offsets;
-- then groups of five as pushmany. Returns the push results in order. One script: Redis at
-- maxmemory (noeviction) refuses it whole when its first write would grow memory, so a page is
-- never acknowledged without its links (a script that has written once runs to its end).
local acks_first, n = ARGV[4] == '1', tonumber(ARGV[5])
local first = 6 + 2 * n
local function acks()
  for i = 6, first - 1, 2 do ack_one(ARGV[i], ARGV[i + 1]) end
end
if acks_first then acks() end
local out = {}
for i = first, #ARGV, 5 do
  out[#out + 1] = push_one(ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3] == '1', ARGV[i + 4])
end
if not acks_first then acks() end
return out
