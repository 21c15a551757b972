-- Compare-and-delete: deletes the lock only if this owner holds it, and
-- leaves a short-lived marker that it did.
-- KEYS[1]: the lock; KEYS[2]: this owner's release marker (same hash slot).
-- ARGV[1]: the owner prefix, "<token>:"; ARGV[2]: how long the marker lives,
-- in milliseconds.
-- Returns 1 released, 2 released already by this owner (a resend of a release
-- that landed: go-redis retries a command whose reply timed out), 0 absent
-- (expired or deleted), -1 held by another owner. The lock is looked at
-- first: should this owner hold it again (a late acquire), it is deleted.
local held = redis.call("GET", KEYS[1])
if held and string.sub(held, 1, #ARGV[1]) == ARGV[1] then
	redis.call("DEL", KEYS[1])
	redis.call("SET", KEYS[2], "1", "PX", ARGV[2])
	return 1
end
if redis.call("EXISTS", KEYS[2]) == 1 then
	return 2
end
if not held then
	return 0
end
return -1
