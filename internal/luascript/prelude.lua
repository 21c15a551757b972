-- The prelude of the scripts that read an activity's hashes
-- (luascript.LoadWithPrelude puts it first). It touches only the keys a
-- script passes it, so every key a script uses is still in its KEYS (one
-- slot under Redis Cluster).

-- clock(): Redis's clock in unix ms, the one clock every script that
-- compares times reads (the room's admissions and the deduct's check).
local function clock()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- fields(key, field, ...): the fields of the hash at key, in one HMGET, as
-- a table by field (STOCK.remaining and ROOM.ends are the fields' names, a
-- field's name being also its Lua name); a field Redis lacks is false.
local function fields(key, ...)
  local names = {...}
  local values = redis.call('HMGET', key, ...)
  local out = {}
  for i, name in ipairs(names) do
    out[name] = values[i]
  end
  return out
end

-- keep(ends, retention, key, ...): the keys live until retention ms (Go's
-- setting, an argument of the script) after the sale ends (ends, unix ms;
-- nothing changes while it is unknown), so an abandoned room does not stay
-- in Redis.
local function keep(ends, retention, ...)
  if ends then
    local at = tonumber(ends) + tonumber(retention)
    for _, key in ipairs({...}) do
      redis.call('PEXPIREAT', key, at)
    end
  end
end

-- receipt(text): a deduct's receipt, "<epoch>:<units the grant holds>",
-- maybe with ":<i>,<i>,..." after it, the 1-based places of the buyers
-- served (deduct.lua): the epoch (a string), the units and that list (""
-- when the receipt has none).
local function receipt(text)
  local epoch, units, served = string.match(text, '^([^:]*):(%d+):?(.*)')
  return epoch, tonumber(units), served
end
