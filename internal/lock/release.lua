-- Compare-and-delete: deletes the lock only if this owner holds it.
-- KEYS[1]: the lock. ARGV[1]: the owner prefix, "<token>:".
-- Returns 1 released, 0 absent (expired or deleted), -1 held by another owner.
local held = redis.call("GET", KEYS[1])
if not held then
	return 0
end
if string.sub(held, 1, #ARGV[1]) ~= ARGV[1] then
	return -1
end
redis.call("DEL", KEYS[1])
return 1
