-- Puts back the units of an order that expired unpaid, exactly once: all
-- of them (its quantity) in one step.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- KEYS[2]: the order's return receipt.
-- ARGV[1]: the stock's epoch read before the order was expired in the
-- database; ARGV[2]: how long the receipt lives, in milliseconds; ARGV[3]:
-- the order's units. The receipt is "<epoch>:<units>" (ledger.lua).
-- Returns the units left after the return; -2 when the receipt exists (the
-- unit went back already: a repeat, or a retry after a lost reply); -1 when
-- the stock was loaded again since ARGV[1] (that load may have counted the
-- unit as unsold already, and adding it could count it twice); nil (false)
-- when the stock is not loaded (the next load counts it from the database).
-- In every refusal the stock is unchanged.
if redis.call('EXISTS', KEYS[2]) == 1 then
  return -2
end
local stock = fields(KEYS[1], STOCK.remaining, STOCK.epoch)
if not stock.remaining then
  return false
end
if (stock.epoch or '0') ~= ARGV[1] then
  return -1
end
redis.call('SET', KEYS[2], ARGV[1] .. ':' .. ARGV[3], 'PX', ARGV[2])
return redis.call('HINCRBY', KEYS[1], STOCK.remaining, ARGV[3])
