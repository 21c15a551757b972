-- Issues a held lock a new fence and sets its TTL, only if this owner holds
-- it: a new grant to the same holder, with no moment where the key is free.
-- KEYS[1]: the lock; KEYS[2]: its fence counter (same hash slot).
-- ARGV[1]: the owner prefix, "<token>:"; ARGV[2]: the TTL in milliseconds.
-- Returns the new fence (>= 1), 0 when the lock is absent (expired or
-- deleted), -1 when another owner holds it.
local held = redis.call("GET", KEYS[1])
if not held then
	return 0
end
if string.sub(held, 1, #ARGV[1]) ~= ARGV[1] then
	return -1
end
local fence = redis.call("INCR", KEYS[2])
redis.call("SET", KEYS[1], ARGV[1] .. fence, "PX", ARGV[2])
return fence
