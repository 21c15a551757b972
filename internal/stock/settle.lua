-- Settles a grant's deduct: the grant keeps ARGV[1] units (the orders it
-- wrote) and the rest of what it took goes back to the stock.
-- KEYS[1]: the activity's stock hash (fields "remaining" and "epoch").
-- KEYS[2]: the grant's receipt, "<epoch>:<units the grant holds>", maybe
-- with ":<buyers served>" after it (deduct.lua), dropped once settled.
-- ARGV[1]: units the grant keeps; ARGV[2]: receipt lifetime in ms.
-- The receipt is lowered to what is kept before anything goes back, so
-- settling is idempotent: running it again (a resend after a lost reply, or
-- a retry) returns nothing more, and a settle can only ever lower what the
-- grant holds.
-- Returns {remaining, returned}; -2 when there was no receipt: the deduct
-- never landed, and a tombstone receipt holding 0 units is left so that a
-- deduct landing late (after its caller gave up) takes nothing; -1 when the
-- stock was loaded again since the deduct (the load already counted those
-- units as unsold; adding them would count them twice); nil (false) when
-- the stock is not loaded (HINCRBY would resurrect a deleted stock). In
-- every refusal the stock is unchanged.
local grantReceipt = redis.call('GET', KEYS[2])
if not grantReceipt then
  local epoch = redis.call('HGET', KEYS[1], STOCK.epoch) or '0'
  redis.call('SET', KEYS[2], epoch .. ':0', 'PX', ARGV[2])
  return -2
end
local epoch, held = receipt(grantReceipt)
local kept = tonumber(ARGV[1])
local stock = fields(KEYS[1], STOCK.remaining, STOCK.epoch)
local left = tonumber(stock.remaining)
if held <= kept then
  if not left then
    return false
  end
  return {left, 0}
end
redis.call('SET', KEYS[2], epoch .. ':' .. kept, 'KEEPTTL')
if not left then
  return false
end
if (stock.epoch or '0') ~= epoch then
  return -1
end
return {redis.call('HINCRBY', KEYS[1], STOCK.remaining, held - kept), held - kept}
