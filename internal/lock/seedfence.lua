-- Raises a fence counter to at least ARGV[1]; never lowers it.
-- KEYS[1]: the fence counter. ARGV[1]: the floor.
local current = tonumber(redis.call("GET", KEYS[1]) or "0")
if current < tonumber(ARGV[1]) then
	redis.call("SET", KEYS[1], ARGV[1])
end
return 0
