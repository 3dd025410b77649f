-- ARGV[4] fp8, [5] bloom offsets or ""
return ack_one(ARGV[4], ARGV[5])
