-- note(field, value, ends, retention): tells every instance holding a queue/mine
-- request (hold.go) that some users' state changed: one entry in the room's
-- notes (a stream, KEYS[8]) carrying the room's note number n (the room's
-- field "notes", counted up by one a note) and the change: "a", the users
-- admitted, comma-separated, or "c", the reason the room closed. Written by
-- the script that makes the change, so a note is exactly as durable as the
-- change it tells of: a failover that loses one loses the other. The number
-- lets a reader see a note it missed (trimmed, or lost with its change) and
-- wake every holder of the room instead. The stream keeps the last 256
-- notes, and lives as long as the room's other keys (keep's ends and
-- retention).
local function note(field, value, ends, retention)
  local n = redis.call('HINCRBY', KEYS[1], ROOM.notes, 1)
  redis.call('XADD', KEYS[8], 'MAXLEN', '~', 256, '*', 'n', n, field, value)
  keep(ends, retention, KEYS[8])
  return n
end
