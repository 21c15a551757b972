-- standing(user, shared): one user's standing in an activity's waiting
-- room, read without writing; shared is roomShared(now), read once a
-- script (a join changes none of it). The head of status.lua and join.lua
-- (luascript.LoadWithPrelude joins the files). KEYS: the room, the line,
-- the open admissions, the users' ends (as join.lua), the activity's buyer
-- set and stock hash.
-- Returns the fields joined by commas, one string (a reply of one value a
-- user, not seventeen: the service's CPU per join is the reply's values):
-- on ("" when Redis has no room at all), now, opens, starts, ends, closed,
-- rank, until, buyer, waiting, admitted, rate, remaining, pace, hold,
-- paused, ended. rank is the user's 0-based rank in the line (-1: not in
-- it); until the end of the user's open admission in unix ms (-1: none);
-- buyer 1 when the user is in the buyer set; waiting and admitted the sizes
-- of the line and of the open admissions; rate the measured admissions per
-- second; remaining the units left (-1: the stock is not loaded); pace the
-- admissions a second the last step allowed; hold the units one admission
-- holds (the activity's per-user limit); paused since when ops paused the
-- sale, unix ms (internal/stock/stop.go's flag; 0: not paused); ended, last as it may hold anything, the
-- user's end ("" none). Every field is Redis's own string, or an integer,
-- never a Lua number formatted as a float.
local function roomShared(now)
  local room = fields(KEYS[1], ROOM.on, ROOM.opens, ROOM.starts, ROOM.ends, ROOM.closed, ROOM.rate,
    ROOM.pace, ROOM.hold)
  local stock = fields(KEYS[6], STOCK.remaining, STOCK.paused)
  return {
    head = table.concat({room.on or '', string.format('%d', now), room.opens or '0', room.starts or '0',
      room.ends or '0', room.closed or ''}, ','),
    admitted = redis.call('ZCARD', KEYS[3]),
    tail = table.concat({room.rate or '0', stock.remaining or -1, room.pace or '0', room.hold or '1',
      stock.paused or 0}, ','),
  }
end

local function standing(user, shared)
  return table.concat({shared.head, redis.call('ZRANK', KEYS[2], user) or -1,
    redis.call('ZSCORE', KEYS[3], user) or -1, redis.call('SISMEMBER', KEYS[5], user),
    redis.call('ZCARD', KEYS[2]), shared.admitted, shared.tail, redis.call('HGET', KEYS[4], user) or ''}, ',')
end
