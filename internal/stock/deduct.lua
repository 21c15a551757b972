-- Takes up to ARGV[1] units of an activity's stock for one lock grant,
-- atomically, and leaves the grant's receipt.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- KEYS[2]: the grant's receipt, "<epoch>:<units the grant holds>".
-- KEYS[3]: the activity's buyer set: the users units were taken for.
-- KEYS[4], KEYS[5]: the activity's waiting room (hash, "on" = "1" while it
-- has one) and its open admissions (sorted set: user -> until, unix ms).
-- ARGV[1]: units wanted (at least 1); ARGV[2]: receipt lifetime in ms;
-- ARGV[3..]: the buyers in the order units go to (none, or ARGV[1] of them):
-- the first <taken> join the buyer set with the deduct, atomically, so any
-- holder of an order is in it (the set may hold more: a buyer whose unit
-- went back), and a sold-out answer can tell holders apart without the
-- database.
-- Returns {taken, remaining}: taken is 0 when none was left; -3 when the
-- grant already settled everything back (see below); -5 paused, -6 ended
-- (below); nil (false) when
-- the stock was never loaded, so a lost or unloaded key is never mistaken for
-- "sold out" nor created by HINCRBY.
-- One grant deducts once. An existing receipt means this deduct already ran
-- (a client resending it after a lost reply) or the grant was settled before
-- it landed (a tombstone written by settle.lua, holding 0 units): either way
-- nothing more is taken, and the receipt's count is what the grant holds.
-- Nothing is written unless a unit is taken: the sold-out storm only reads.
-- While the activity has a waiting room, units go only to buyers whose
-- admission is open by Redis's clock, the one the room's admissions run on:
-- otherwise nothing is taken and the reply is {-4, i, ...}, the 1-based
-- places in ARGV[3..] of the buyers not admitted. The room counts each open
-- admission against the units left, so this check is what keeps an admitted
-- buyer from hearing sold_out (internal/waitingroom/admit.lua).
local left = tonumber(redis.call('HGET', KEYS[1], 'remaining'))
if not left then
  return false
end
local receipt = redis.call('GET', KEYS[2])
if receipt then
  local sep = string.find(receipt, ':', 1, true)
  local held = tonumber(string.sub(receipt, sep + 1))
  if held == 0 then
    return -3
  end
  return {held, left}
end
-- A sale ops ended or paused (docs/API.md "Stopping a sale") sells nothing,
-- whatever an instance's cached copy of the activity says: -6 ended, -5
-- paused (the window's answer first). Fields "ended" and "paused" of the
-- stock hash (stop.go); a reload writes them from the database.
if redis.call('HEXISTS', KEYS[1], 'ended') == 1 then
  return -6
end
if redis.call('HEXISTS', KEYS[1], 'paused') == 1 then
  return -5
end
if #ARGV >= 3 and redis.call('HGET', KEYS[4], 'on') == '1' then
  local t = redis.call('TIME')
  local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  local refused = {-4}
  for i = 3, #ARGV do
    local until_ = redis.call('ZSCORE', KEYS[5], ARGV[i])
    if not until_ or tonumber(until_) <= now then
      refused[#refused + 1] = i - 2
    end
  end
  if #refused > 1 then
    return refused
  end
end
local take = math.min(tonumber(ARGV[1]), left)
if take <= 0 then
  return {0, left}
end
left = redis.call('HINCRBY', KEYS[1], 'remaining', -take)
if #ARGV >= 3 then
  redis.call('SADD', KEYS[3], unpack(ARGV, 3, 2 + take))
end
local epoch = redis.call('HGET', KEYS[1], 'epoch') or '0'
redis.call('SET', KEYS[2], epoch .. ':' .. take, 'PX', ARGV[2])
return {take, left}
