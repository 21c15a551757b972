-- Records when a user in line was told to come back (a join's or a poll's
-- refresh_s), by Redis's clock, the one admit.lua's idle lapse reads: an
-- admission's idle clock starts no earlier than that, so a buyer who polls
-- as told is never lapsed as gone before their next poll was due.
-- KEYS[1]: the room's hash; KEYS[2]: the due times (sorted set: user -> ms).
-- ARGV[1]: the user; ARGV[2]: the refresh told, in ms.
-- The key lives as long as the room's others (docs/API.md "Waiting room
-- limits").
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
local ends = redis.call('HGET', KEYS[1], 'ends')
if ends then
  redis.call('PEXPIREAT', KEYS[2], tonumber(ends) + 86400000)
end
return 1
