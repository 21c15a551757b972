-- Issues a held lock a new fence and sets its TTL, only if this owner holds
-- it: a new grant to the same holder, with no moment where the key is free.
-- KEYS[1]: the lock; KEYS[2]: its fence counter; KEYS[3]: its waiters'
-- marker, set by an acquire another owner was refused (obtain.lua) (all
-- three in one hash slot).
-- ARGV[1]: the owner prefix, "<token>:"; ARGV[2]: the TTL in milliseconds;
-- ARGV[3]: the holder's current fence. The new fence is above it even when
-- the counter went back (a failover lost its last INCRs with the lock key's
-- value): the grant's token is "<owner>:<fence>" and a hold keeps its owner,
-- so a fence the holder had already had would give two of its batches one
-- deduct receipt (internal/stock), and one batch's settle would act on the
-- other's units. The counter is raised with it, so no later grant goes
-- below either.
-- Returns the new fence (>= 1), 0 when the lock is absent (expired or
-- deleted), -1 when another owner holds it, -2 when another owner waits
-- for it: nothing changes, and the holder should let it go. The marker
-- holds the waiter's owner prefix: a holder that marked it while it waited
-- is not waiting for itself.
local held = redis.call("GET", KEYS[1])
if not held then
	return 0
end
if string.sub(held, 1, #ARGV[1]) ~= ARGV[1] then
	return -1
end
local waiter = redis.call("GET", KEYS[3])
if waiter and waiter ~= ARGV[1] then
	return -2
end
local fence = redis.call("INCR", KEYS[2])
local had = tonumber(ARGV[3]) or 0
if fence <= had then
	fence = had + 1
	redis.call("SET", KEYS[2], fence)
end
redis.call("SET", KEYS[1], ARGV[1] .. fence, "PX", ARGV[2])
return fence
