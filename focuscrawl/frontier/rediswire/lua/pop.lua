-- ARGV[4] host, [5] lease seconds; returns {rest, packed score} of the best live entry
return pop_host(ARGV[4], tonumber(ARGV[5]), true) or false
