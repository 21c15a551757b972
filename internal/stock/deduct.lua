-- Takes one unit of an activity's stock, atomically.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- Returns {units left after taking one, epoch}; {-1, epoch} when none was left
-- (nothing changed); nil (false) when the stock was never loaded, so that a
-- lost or unloaded key is never mistaken for "sold out" nor created by HINCRBY.
local epoch = redis.call('HGET', KEYS[1], 'epoch') or 0
if redis.call('HEXISTS', KEYS[1], 'remaining') == 0 then
  return false
end
local left = redis.call('HINCRBY', KEYS[1], 'remaining', -1)
if left < 0 then
  redis.call('HINCRBY', KEYS[1], 'remaining', 1)
  return {-1, tonumber(epoch)}
end
return {left, tonumber(epoch)}
