-- Gives users one place each in an activity's waiting room, or tells why
-- not (standing.lua comes first).
-- KEYS[1]: the room (hash: on, opens, starts, ends in unix ms, seed, seq,
--          closed); KEYS[2]: the line (sorted set: user -> place);
-- KEYS[3]: the open admissions (sorted set: user -> admitted until, ms);
-- KEYS[4]: the users' ends (hash: user -> "d:<order id>", "c:<reason>" or
--          "l" for a lapsed admission); KEYS[5], KEYS[6]: the activity's
--          buyer set and stock hash (read only).
-- ARGV[1]: how long the room's keys live after the sale ends, in ms
-- (waitingroom.Retention); then triples of a user, the most places not yet
-- admitted for them, and
-- 1 when the caller asked whether the user holds an order (0: a user in
-- the buyer set gets no place, the answer "buyer": the caller asks and
-- joins again), in the order the joins arrived: the joins of one room that
-- arrived while the previous call was in flight (Store.join's batch). Each
-- is joined as if alone, one after the other, so the batch answers what one
-- call each would have.
-- Returns, per user, one string: the answer, a comma and the user's
-- standing after it (standing.lua's), so a join needs no second read. The
-- answer is "joined", "have" (the user has a place, whatever its state,
-- even in a room turned off), "none" (no waiting room), "not_open",
-- "ended", "buyer", "paused" (ops paused the sale), "closed" or "full" (the
-- line holds the user's most places: no place is given).
-- A place in the pre-queue (before starts) is the first 52 bits of
-- SHA1(seed ":" user): fixed by the seed, which buyers never see, so joining
-- earlier, again or from elsewhere changes nothing, and a failover that
-- lost the join gives the same place when the user joins again. The line's
-- order at starts is then a uniformly random permutation of the pre-queue,
-- which anyone holding the seed can recompute. A later join is placed at
-- 2^52 + its arrival number: behind every pre-queue place, in arrival order.
-- The room's keys live until the retention after the sale ends (docs/API.md
-- "Waiting room limits"), so an abandoned room does not stay in Redis: set
-- once a call that gave a place.

local function join(user, most, asked, now, room)
  if redis.call('ZSCORE', KEYS[2], user) or redis.call('ZSCORE', KEYS[3], user) then
    return 'have'
  end
  local ended = redis.call('HGET', KEYS[4], user)
  if ended and ended ~= 'l' then
    return 'have'
  end
  if room.on ~= '1' then
    return 'none'
  end
  if now < tonumber(room.opens) then
    return 'not_open'
  end
  -- The stock's flag as well as the room's end: ops' end before the start
  -- is refused even where the room's end was not rewritten.
  if now >= tonumber(room.ends) or redis.call('HEXISTS', KEYS[6], STOCK.ended) == 1 then
    return 'ended'
  end
  if asked ~= '1' and redis.call('SISMEMBER', KEYS[5], user) == 1 then
    return 'buyer'
  end
  if redis.call('HEXISTS', KEYS[6], STOCK.paused) == 1 then
    return 'paused'
  end
  if room.closed then
    return 'closed'
  end
  if redis.call('ZCARD', KEYS[2]) >= most then
    return 'full'
  end
  local place
  if now < tonumber(room.starts) then
    place = tonumber(string.sub(redis.sha1hex(room.seed .. ':' .. user), 1, 13), 16)
  else
    place = 4503599627370496 + redis.call('HINCRBY', KEYS[1], ROOM.seq, 1)
  end
  if ended then
    redis.call('HDEL', KEYS[4], user) -- a lapsed user joins again, at the back
  end
  redis.call('ZADD', KEYS[2], place, user)
  return 'joined'
end

local now = clock()
local room = fields(KEYS[1], ROOM.on, ROOM.opens, ROOM.starts, ROOM.ends, ROOM.seed, ROOM.closed)
local shared = roomShared(now)
local out, placed = {}, false
for i = 2, #ARGV, 3 do
  local answer = join(ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2], now, room)
  placed = placed or answer == 'joined'
  out[#out + 1] = answer .. ',' .. standing(ARGV[i], shared)
end
if placed then
  keep(room.ends, ARGV[1], unpack(KEYS, 1, 4))
end
return out
