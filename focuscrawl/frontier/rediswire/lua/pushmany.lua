-- ARGV[4..] groups of five, as push's ARGV[4..8]; returns the results in order
local out = {}
for i = 4, #ARGV, 5 do
  out[#out + 1] = push_one(ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], ARGV[i + 3] == '1', ARGV[i + 4])
end
return out
