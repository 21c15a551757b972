-- One step of an activity's waiting room: lapses the admissions that ran
-- out, then admits the next places in line, as many as the units left that
-- no open admission may still take, and no faster than the pace allows.
-- KEYS: as join.lua, and KEYS[5]: the activity's stock hash ("remaining").
-- ARGV[1]: the least admissions per second; ARGV[2]: the most;
-- ARGV[3]: the admission's lifetime in ms; ARGV[4]: the most admitted or
-- lapsed in one step; ARGV[5]: the idle lapse in ms (0: off); ARGV[6]: how
-- long the room's keys live after the sale ends, in ms
-- (waitingroom.Retention).
-- KEYS[6]: when each admitted buyer was last seen (sorted set: user -> ms).
-- An admission whose buyer was not seen (a poll, a purchase) for ARGV[5]
-- lapses early, so buyers who left do not hold units a whole admission.
-- KEYS[7]: when each user in line was told to come back (due.lua): an
-- admission's idle clock starts then at the earliest.
-- KEYS[8]: the room's notes (note.lua, which comes first): the users each
-- step admits, and the room closing as ended, for the held requests.
-- Returns {admitted, lapsed, remaining, open, waiting, closed, total, rate}:
-- remaining is -1 when the stock is not loaded (nobody is admitted then);
-- closed is the room's closed reason or ""; total the admissions the room
-- ever gave; rate the measured admissions a second (a string).
-- A room closed as sold out opens again when units are left that no
-- admission holds (a unit given back after it closed, or ops adding stock).
--
-- Why an admitted buyer is never told sold_out: every open admission
-- counts its hold (the per-user limit) against the units left (admit only
-- while open * hold + hold <= remaining), and a
-- deduct takes units only for buyers whose admission is open (deduct.lua),
-- so until an admission is used up or lapses its unit can only go to its
-- own buyer. The step and the deduct read one clock, Redis's, atomically.
-- The room's keys live until the retention after the sale ends (docs/API.md
-- "Waiting room limits"), so an abandoned room does not stay in Redis.
if redis.call('HGET', KEYS[1], ROOM.on) ~= '1' then
  return {0, 0, -1, 0, 0, '', 0, '0'}
end
local now = clock()
local most = tonumber(ARGV[4])
local retention = ARGV[6]
local room = fields(KEYS[1], ROOM.starts, ROOM.ends, ROOM.closed, ROOM.tokens, ROOM.last, ROOM.rate,
  ROOM.used, ROOM.used_seen, ROOM.used_rate, ROOM.admitted, ROOM.hold)
-- A sale ops paused admits no one and lapses nothing: its admissions move
-- later by the pause's length when it resumes (internal/stock/resume.lua).
if redis.call('HEXISTS', KEYS[5], STOCK.paused) == 1 and now < tonumber(room.ends) then
  return {0, 0, -1, 0, 0, '', 0, room.rate or '0'}
end

local lapsed = redis.call('ZRANGEBYSCORE', KEYS[3], '-inf', now, 'LIMIT', 0, most)
for _, user in ipairs(lapsed) do
  redis.call('ZREM', KEYS[3], user)
  if not redis.call('HGET', KEYS[4], user) then
    redis.call('HSET', KEYS[4], user, 'l')
  end
end
local idle = tonumber(ARGV[5])
if idle > 0 then
  local gone = redis.call('ZRANGEBYSCORE', KEYS[6], '-inf', '(' .. (now - idle), 'LIMIT', 0, most)
  for _, user in ipairs(gone) do
    redis.call('ZREM', KEYS[6], user)
    if redis.call('ZREM', KEYS[3], user) == 1 then
      if not redis.call('HGET', KEYS[4], user) then
        redis.call('HSET', KEYS[4], user, 'l')
      end
      lapsed[#lapsed + 1] = user
    end
  end
end
if #lapsed > 0 then
  redis.call('HINCRBY', KEYS[1], ROOM.lapsed, #lapsed)
  keep(room.ends, retention, unpack(KEYS, 1, 4))
end

local waiting = redis.call('ZCARD', KEYS[2])
local open = redis.call('ZCARD', KEYS[3])
local closed = room.closed or ''
if closed == '' and now >= tonumber(room.ends) then
  closed = 'ended'
  redis.call('HSET', KEYS[1], ROOM.closed, closed)
  note('c', closed, room.ends, retention)
end
local left = tonumber(redis.call('HGET', KEYS[5], STOCK.remaining))
local total = tonumber(room.admitted) or 0
-- Each open admission holds <hold> units, the activity's per-user limit
-- (docs/API.md "Quantity per buyer"): free is what none of them holds.
local hold = tonumber(room.hold) or 1
local free = (left or 0) - open * hold
if closed == 'sold_out' and left and free > 0 then
  closed = ''
  redis.call('HDEL', KEYS[1], ROOM.closed)
end
if closed ~= '' or now < tonumber(room.starts) or not left then
  return {0, #lapsed, left or -1, open, waiting, closed, total, room.rate or '0'}
end

-- The pace: a token bucket refilled at twice the rate admissions are used
-- up (purchases), within the bounds, holding one second's worth.
-- The first step counts its admissions over a second.
local last = tonumber(room.last) or (now - 1000)
local dt = math.max(now - last, 0)
local used = tonumber(room.used) or 0
local usedRate = tonumber(room.used_rate) or 0
local decay = 1 - math.exp(-dt / 5000)
if dt > 0 then
  usedRate = usedRate + decay * ((used - (tonumber(room.used_seen) or 0)) * 1000 / dt - usedRate)
end
local pace = math.min(math.max(2 * usedRate, tonumber(ARGV[1])), tonumber(ARGV[2]))
local tokens = math.min((tonumber(room.tokens) or pace) + pace * dt / 1000, pace)

-- Admit as many as there are free holds; when fewer units are left than
-- one hold and no admission is open, the last of them go to one admission
-- (it holds them all; a larger ask hears not_enough_stock, true of the
-- whole sale), so no unit waits for nobody.
local places = math.floor(free / hold)
if places == 0 and free > 0 and open == 0 then
  places = 1
end
local k = math.min(places, math.floor(tokens), most, waiting)
local admitted = 0
if k > 0 then
  local until_ = now + tonumber(ARGV[3])
  local popped = redis.call('ZPOPMIN', KEYS[2], k)
  local users = {}
  for i = 1, #popped, 2 do
    users[#users + 1] = popped[i]
    redis.call('ZADD', KEYS[3], until_, popped[i])
    if idle > 0 then
      -- The idle clock starts when the buyer is due back, if later: one
      -- told to poll in 9 s (the draw's spread) is not gone in 3.
      local seen = tonumber(redis.call('ZSCORE', KEYS[7], popped[i])) or now
      redis.call('ZADD', KEYS[6], math.max(seen, now), popped[i])
      redis.call('ZREM', KEYS[7], popped[i])
    end
    admitted = admitted + 1
  end
  if idle > 0 then
    keep(room.ends, retention, KEYS[6])
  end
  note('a', table.concat(users, ','), room.ends, retention)
  tokens = tokens - admitted
  total = redis.call('HINCRBY', KEYS[1], ROOM.admitted, admitted)
  keep(room.ends, retention, unpack(KEYS, 1, 4))
end
local rate = tonumber(room.rate) or 0
if dt > 0 then
  rate = rate + decay * (admitted * 1000 / dt - rate)
end
redis.call('HSET', KEYS[1], ROOM.tokens, tostring(tokens), ROOM.last, now, ROOM.rate, tostring(rate),
  ROOM.used_seen, used, ROOM.used_rate, tostring(usedRate), ROOM.pace, tostring(pace))
return {admitted, #lapsed, left, open + admitted, waiting - admitted, '', total, tostring(rate)}
