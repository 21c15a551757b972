-- Resumes a paused sale: clears the stock's "paused" flag and moves every
-- waiting-room admission that was open when the pause began later by the
-- pause's length, in one step, so an admitted buyer keeps the time they
-- had (docs/API.md "Stopping a sale"). The room's admitter neither lapses
-- nor admits while the flag is set (internal/waitingroom/admit.lua).
-- KEYS[1]: the activity's stock hash ("paused" = since when, unix ms);
-- KEYS[2]: the room's open admissions (sorted set: user -> until, unix ms);
-- KEYS[3]: when each admitted buyer was last seen (sorted set: user -> ms,
-- internal/waitingroom/seen.lua).
-- Returns the pause's length in ms, or -1 when the sale was not paused
-- (a resume again, or on another instance first: nothing moves twice).
local since = tonumber(redis.call('HGET', KEYS[1], STOCK.paused))
if not since then
  return -1
end
redis.call('HDEL', KEYS[1], STOCK.paused)
local shift = math.max(clock() - since, 0)
if shift > 0 then
  local open = redis.call('ZRANGEBYSCORE', KEYS[2], '(' .. since, '+inf')
  for _, user in ipairs(open) do
    redis.call('ZINCRBY', KEYS[2], shift, user)
    -- The idle lapse counts the time outside the pause only: a buyer who
    -- waited through the pause without polling is not gone.
    local seen = redis.call('ZSCORE', KEYS[3], user)
    if seen then
      redis.call('ZADD', KEYS[3], tonumber(seen) + shift, user)
    end
  end
end
return shift
