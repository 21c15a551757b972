-- Puts back the unit a deduct took, if that deduct happened and was not
-- returned yet, and leaves a tombstone in its receipt: running this twice
-- returns once, and the deduct, should it land only now, takes nothing.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- KEYS[2]: the deduct's receipt.
-- ARGV[1]: the tombstone value; ARGV[2]: how long it lives, in milliseconds.
-- Returns the units left after the return; -2 when there is no receipt (the
-- deduct has not landed, or was returned already); -1 when the stock was
-- loaded again since the deduct (the load already counted the unit as
-- unsold, so adding it would count it twice); nil (false) when the stock is
-- not loaded: HINCRBY would create the key with 1 and resurrect a stock that
-- was deleted or never loaded. In every refusal the stock is unchanged; the
-- tombstone is written in every case.
local epoch = redis.call('GET', KEYS[2])
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
if not epoch or epoch == ARGV[1] then
  return -2
end
if redis.call('HEXISTS', KEYS[1], 'remaining') == 0 then
  return false
end
if (redis.call('HGET', KEYS[1], 'epoch') or '0') ~= epoch then
  return -1
end
return redis.call('HINCRBY', KEYS[1], 'remaining', 1)
