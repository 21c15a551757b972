-- Puts one unit back into an activity's stock.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- ARGV[1]: the epoch the unit was deducted in.
-- Returns the units left after the return; -1 when the stock was loaded again
-- since the deduct (the load already counted the unit as unsold, so adding it
-- would count it twice); nil (false) when the stock is not loaded: HINCRBY
-- would create the key with 1 and resurrect a stock that was deleted or never
-- loaded. In both refusals nothing changes.
if redis.call('HEXISTS', KEYS[1], 'remaining') == 0 then
  return false
end
if tonumber(redis.call('HGET', KEYS[1], 'epoch') or 0) ~= tonumber(ARGV[1]) then
  return -1
end
return redis.call('HINCRBY', KEYS[1], 'remaining', 1)
