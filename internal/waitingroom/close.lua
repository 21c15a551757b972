-- Closes an activity's waiting room as sold out, if it still is: no unit
-- left and no admission open. The caller has checked that no unit can come
-- back (no unpaid order holds one).
-- KEYS: as admit.lua (note.lua comes first: the close is noted for the
-- held requests). ARGV[1]: how long the room's keys live after the sale
-- ends, in ms (waitingroom.Retention). Returns 1 when the room is closed
-- now, else 0.
local room = fields(KEYS[1], ROOM.on, ROOM.closed, ROOM.ends)
if room.on ~= '1' or room.closed then
  return 0
end
local left = tonumber(redis.call('HGET', KEYS[5], STOCK.remaining))
if not left or left > 0 or redis.call('ZCARD', KEYS[3]) > 0 then
  return 0
end
redis.call('HSET', KEYS[1], ROOM.closed, 'sold_out')
note('c', 'sold_out', room.ends, ARGV[1])
return 1
