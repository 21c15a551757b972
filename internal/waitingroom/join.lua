-- Gives a user one place in an activity's waiting room, or tells why not.
-- KEYS[1]: the room (hash: on, opens, starts, ends in unix ms, seed, seq,
--          closed); KEYS[2]: the line (sorted set: user -> place);
-- KEYS[3]: the open admissions (sorted set: user -> admitted until, ms);
-- KEYS[4]: the users' ends (hash: user -> "d:<order id>", "c:<reason>" or
--          "l" for a lapsed admission).
-- ARGV[1]: the user; ARGV[2]: the most places not yet admitted.
-- Returns "joined", "have" (the user has a place, whatever its state),
-- "none" (no waiting room), "not_open", "ended", "closed" or "full" (the
-- line holds ARGV[2] places: no place is given).
-- A place in the pre-queue (before starts) is the first 52 bits of
-- SHA1(seed ":" user): fixed by the seed, which buyers never see, so joining
-- earlier, again or from elsewhere changes nothing, and a failover that
-- lost the join gives the same place when the user joins again. The line's
-- order at starts is then a uniformly random permutation of the pre-queue,
-- which anyone holding the seed can recompute. A later join is placed at
-- 2^52 + its arrival number: behind every pre-queue place, in arrival order.
-- The room's keys live until 24 hours after the sale ends (docs/API.md
-- "Waiting room limits"), so an abandoned room does not stay in Redis.
local function keep(ends)
  if ends then
    local at = tonumber(ends) + 86400000
    for i = 1, 4 do
      redis.call('PEXPIREAT', KEYS[i], at)
    end
  end
end
if redis.call('HGET', KEYS[1], 'on') ~= '1' then
  return 'none'
end
local user = ARGV[1]
if redis.call('ZSCORE', KEYS[2], user) or redis.call('ZSCORE', KEYS[3], user) then
  return 'have'
end
local ended = redis.call('HGET', KEYS[4], user)
if ended and ended ~= 'l' then
  return 'have'
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local room = redis.call('HMGET', KEYS[1], 'opens', 'starts', 'ends', 'seed', 'closed')
if now < tonumber(room[1]) then
  return 'not_open'
end
if now >= tonumber(room[3]) then
  return 'ended'
end
if room[5] then
  return 'closed'
end
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then
  return 'full'
end
local place
if now < tonumber(room[2]) then
  place = tonumber(string.sub(redis.sha1hex(room[4] .. ':' .. user), 1, 13), 16)
else
  place = 4503599627370496 + redis.call('HINCRBY', KEYS[1], 'seq', 1)
end
if ended then
  redis.call('HDEL', KEYS[4], user) -- a lapsed user joins again, at the back
end
redis.call('ZADD', KEYS[2], place, user)
keep(room[3])
return 'joined'
