-- Takes one unit of an activity's stock, atomically, and leaves a receipt.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- KEYS[2]: the receipt of this deduct (one per lock grant).
-- ARGV[1]: how long the receipt lives, in milliseconds.
-- ARGV[2]: the tombstone value a Return leaves in the receipt.
-- Returns the units left after taking one; -1 when none was left (nothing
-- changed); -2 when the receipt is a tombstone (nothing changed); nil (false)
-- when the stock was never loaded, so that a lost or unloaded key is never
-- mistaken for "sold out" nor created by HINCRBY.
-- The receipt holds the stock's epoch. It lets the caller put the unit back
-- exactly once, also after a deduct whose reply it never got, and it makes a
-- resent deduct (a client retrying after a lost reply) take nothing more.
-- Any receipt means this fence's deduct is done: either it took its unit, or
-- a Return came first and left a tombstone, so a deduct that lands after the
-- caller gave up on it and returned it (a TCP retransmit, a resend on a new
-- connection) takes nothing that nobody would ever put back.
-- Nothing is written unless a unit is taken: the sold-out storm only reads.
local left = tonumber(redis.call('HGET', KEYS[1], 'remaining'))
if not left then
  return false
end
local receipt = redis.call('GET', KEYS[2])
if receipt == ARGV[2] then
  return -2
end
if receipt then
  return left
end
if left <= 0 then
  return -1
end
left = redis.call('HINCRBY', KEYS[1], 'remaining', -1)
redis.call('SET', KEYS[2], redis.call('HGET', KEYS[1], 'epoch') or '0', 'PX', ARGV[1])
return left
