-- Takes a lock grant's units of an activity's stock, atomically, and
-- leaves the grant's receipt.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- KEYS[2]: the grant's receipt, "<epoch>:<units the grant holds>", with
-- ":<i>,<i>,..." after it when the buyers served are not simply the first
-- <units> (below).
-- KEYS[3]: the activity's buyer set: the users units were taken for.
-- KEYS[4], KEYS[5]: the activity's waiting room (hash, "on" = "1" while it
-- has one) and its open admissions (sorted set: user -> until, unix ms).
-- KEYS[6]: the room's deducts (hash: user -> the receipt key of the last
-- grant that took units for them).
-- ARGV[1]: units wanted (at least 1); ARGV[2]: receipt lifetime in ms;
-- ARGV[3]: n, the number of buyers (at least 1);
-- ARGV[4..3+n]: the buyers, in the order units go to them;
-- ARGV[4+n..3+2n]: the units each buyer asks for (docs/API.md "Quantity per
-- buyer"), summing to ARGV[1].
-- A buyer gets all the units asked for or none: in turn, each buyer whose
-- units are all still left takes them, and one who asks for more than is
-- left takes nothing and leaves the rest to a smaller ask behind it. The
-- buyers served join the buyer set with the deduct, atomically, so any
-- holder of an order is in it (the set may hold more: a buyer whose units
-- went back), and a sold-out answer can tell holders apart without the
-- database.
-- Returns {taken, remaining} when the buyers served are the first <taken>
-- (each asking for one unit: the common case),
-- else {taken, remaining, i, ...}, the 1-based places of the buyers
-- served; taken is 0 when none was; -3 when the grant already settled
-- everything back (see below); -5 paused, -6 ended (below); nil (false)
-- when the stock was never loaded, so a lost or unloaded key is never
-- mistaken for "sold out" nor created by HINCRBY.
-- One grant deducts once. An existing receipt means this deduct already ran
-- (a client resending it after a lost reply) or the grant was settled before
-- it landed (a tombstone written by settle.lua, holding 0 units): either way
-- nothing more is taken, and the receipt says what the grant holds and for
-- whom.
-- Nothing is written unless a unit is taken: the sold-out storm only reads.
-- While the activity has a waiting room, units go only to buyers whose
-- admission is open by Redis's clock, the one the room's admissions run on:
-- otherwise nothing is taken and the reply is {-4, i, ...}, the 1-based
-- places of the buyers not admitted. The room counts each open
-- admission against the units left, so this check is what keeps an admitted
-- buyer from hearing sold_out (internal/waitingroom/admit.lua).
local stock = fields(KEYS[1], STOCK.remaining, STOCK.epoch, STOCK.paused, STOCK.ended)
local left = tonumber(stock.remaining)
if not left then
  return false
end
local grantReceipt = redis.call('GET', KEYS[2])
if grantReceipt then
  local _, held, listed = receipt(grantReceipt)
  if held == 0 then
    return -3
  end
  local reply = {held, left}
  for i in string.gmatch(listed, '%d+') do
    reply[#reply + 1] = tonumber(i)
  end
  return reply
end
-- A sale ops ended or paused (docs/API.md "Stopping a sale") sells nothing,
-- whatever an instance's cached copy of the activity says: -6 ended, -5
-- paused (the window's answer first). Fields "ended" and "paused" of the
-- stock hash (stop.go); a reload writes them from the database.
if stock.ended then
  return -6
end
if stock.paused then
  return -5
end
local epoch = stock.epoch or '0'
local n = tonumber(ARGV[3])
local room = false
if n > 0 and redis.call('HGET', KEYS[4], ROOM.on) == '1' then
  local now = clock()
  local refused = {-4}
  for i = 1, n do
    local until_ = redis.call('ZSCORE', KEYS[5], ARGV[3 + i])
    if not until_ or tonumber(until_) <= now then
      refused[#refused + 1] = i
    end
  end
  if #refused > 1 then
    return refused
  end
  -- One admission, one deduct at a time: a buyer whose units another
  -- grant still holds (the same buyer on another instance, before that
  -- batch's answer used the admission up) takes nothing: {-7, i, ...}. The
  -- room counts one hold an open admission; a second deduct would take
  -- units promised to another admitted buyer. A grant settled back to 0,
  -- or a receipt of an earlier load (another epoch), holds nothing.
  local inflight = {-7}
  for i = 1, n do
    local at = redis.call('HGET', KEYS[6], ARGV[3 + i])
    local rec = at and at ~= KEYS[2] and redis.call('GET', at)
    if rec then
      local ep, units = receipt(rec)
      if ep == epoch and units > 0 then
        inflight[#inflight + 1] = i
      end
    end
  end
  if #inflight > 1 then
    return inflight
  end
  room = true
end
local take = 0
local served, users = {}, {}
local first = true -- the buyers served are the first <take>, one unit each
for i = 1, n do
  local q = tonumber(ARGV[3 + n + i])
  if q <= left - take then
    take = take + q
    served[#served + 1] = i
    users[#users + 1] = ARGV[3 + i]
    first = first and q == 1 and #served == i
  end
  if take == left then
    break
  end
end
if take <= 0 then
  return {0, left}
end
left = redis.call('HINCRBY', KEYS[1], STOCK.remaining, -take)
if #users > 0 then
  redis.call('SADD', KEYS[3], unpack(users))
end
if room then
  for _, user in ipairs(users) do
    redis.call('HSET', KEYS[6], user, KEYS[2])
  end
  redis.call('PEXPIRE', KEYS[6], ARGV[2])
end
if first then
  redis.call('SET', KEYS[2], epoch .. ':' .. take, 'PX', ARGV[2])
  return {take, left}
end
redis.call('SET', KEYS[2], epoch .. ':' .. take .. ':' .. table.concat(served, ','), 'PX', ARGV[2])
local reply = {take, left}
for _, i in ipairs(served) do
  reply[#reply + 1] = i
end
return reply
