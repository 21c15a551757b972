-- Uses admissions up with their buyers' final purchase answers.
-- KEYS: as join.lua. ARGV[1]: how long the room's keys live after the sale
-- ends, in ms (waitingroom.Retention); then pairs of user and end:
-- "d:<order id>" (the buyer holds an order) or "c:<reason>" (a final
-- refusal, such as c:user_rejected). Each user leaves the open admissions
-- and the line, so a unit a refused buyer will not take goes to the next
-- place in line. A refusal closes only an open admission: a buyer refused
-- while not admitted keeps their place.
-- The room's keys live until the retention after the sale ends (docs/API.md
-- "Waiting room limits"), so an abandoned room does not stay in Redis.
local done = 0
for i = 2, #ARGV, 2 do
  local holder = string.sub(ARGV[i + 1], 1, 2) == 'd:'
  if holder or redis.call('ZSCORE', KEYS[3], ARGV[i]) then
    redis.call('ZREM', KEYS[3], ARGV[i])
    redis.call('ZREM', KEYS[2], ARGV[i])
    redis.call('HSET', KEYS[4], ARGV[i], ARGV[i + 1])
    if holder then
      done = done + 1
    end
  end
end
if done > 0 then
  redis.call('HINCRBY', KEYS[1], ROOM.used, done)
end
keep(redis.call('HGET', KEYS[1], ROOM.ends), ARGV[1], unpack(KEYS, 1, 4))
return done
