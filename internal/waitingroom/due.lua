-- Records when a user in line was told to come back (a join's or a poll's
-- refresh_s), by Redis's clock, the one admit.lua's idle lapse reads: an
-- admission's idle clock starts no earlier than that, so a buyer who polls
-- as told is never lapsed as gone before their next poll was due.
-- KEYS[1]: the room's hash; KEYS[2]: the due times (sorted set: user -> ms).
-- ARGV[1]: the user; ARGV[2]: the refresh told, in ms; ARGV[3]: how long
-- the room's keys live after the sale ends, in ms (waitingroom.Retention).
-- The key lives as long as the room's others (docs/API.md "Waiting room
-- limits").
redis.call('ZADD', KEYS[2], clock() + tonumber(ARGV[2]), ARGV[1])
keep(redis.call('HGET', KEYS[1], ROOM.ends), ARGV[3], KEYS[2])
return 1
