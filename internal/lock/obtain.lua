-- Grants the lock and issues its fence in one step.
-- KEYS[1]: the lock; KEYS[2]: its fence counter; KEYS[3]: its waiters'
-- marker (all three in one hash slot).
-- ARGV[1]: the owner prefix, "<token>:"; ARGV[2]: the TTL in milliseconds;
-- ARGV[3]: how long, in milliseconds, a refusal marks the lock as waited
-- for (0: not at all), so that a holder keeping it across steps (refence.lua)
-- lets it go.
-- The lock's value is "<token>:<fence>", so a retry of the same acquire finds
-- its own grant and gets the same fence back.
-- Returns the fence (>= 1), or 0 when another owner holds the lock.
local held = redis.call("GET", KEYS[1])
if not held then
	local fence = redis.call("INCR", KEYS[2])
	redis.call("SET", KEYS[1], ARGV[1] .. fence, "PX", ARGV[2])
	return fence
end
if string.sub(held, 1, #ARGV[1]) == ARGV[1] then
	redis.call("PEXPIRE", KEYS[1], ARGV[2])
	return tonumber(string.sub(held, #ARGV[1] + 1))
end
if tonumber(ARGV[3]) > 0 then
	redis.call("SET", KEYS[3], ARGV[1], "PX", ARGV[3])
end
return 0
