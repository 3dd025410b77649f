-- ARGV[4] host, [5] score, [6] rest, [7] force "1"/"0", [8] bloom offsets "k:o,k:o" or ""
return push_one(ARGV[4], tonumber(ARGV[5]), ARGV[6], ARGV[7] == '1', ARGV[8])
