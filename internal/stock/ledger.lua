-- Reads an activity's stock ledger in one atomic step (package doc, "The
-- ledger"): the stock hash and every receipt the activity has, deducts' and
-- order returns'.
-- KEYS[1]: the activity's stock hash.
-- ARGV[1]: the pattern of its deduct receipts' keys; ARGV[2]: of its order
-- returns' receipts. Both in KEYS[1]'s slot (the activity's hash tag), so a
-- Cluster node holds them all.
-- Returns nil (false) when the stock is not loaded; else {remaining, epoch,
-- loaded ("" for a stock loaded before loads kept it), deducts, returns}:
-- deducts a flat list of key, value, milliseconds to live; returns a flat
-- list of key, value.
local stock = fields(KEYS[1], STOCK.remaining, STOCK.epoch, STOCK.loaded)
if not stock.remaining then
  return false
end
local function receipts(pattern, ttl)
  local out, cursor = {}, '0'
  repeat
    local r = redis.call('SCAN', cursor, 'MATCH', pattern, 'COUNT', 1000)
    cursor = r[1]
    for _, k in ipairs(r[2]) do
      local v = redis.call('GET', k)
      if v then
        out[#out + 1] = k
        out[#out + 1] = v
        if ttl then
          out[#out + 1] = redis.call('PTTL', k)
        end
      end
    end
  until cursor == '0'
  return out
end
return {stock.remaining, stock.epoch or '0', stock.loaded or '', receipts(ARGV[1], true), receipts(ARGV[2], false)}
