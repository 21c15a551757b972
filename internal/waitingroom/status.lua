-- Reads users' standings in an activity's waiting room, without writing
-- (standing.lua comes first: its KEYS and the fields of each standing).
-- ARGV: the users, one standing each in their order: the status reads of
-- one room that arrived together (Store.standing's batch).
local shared = roomShared(clock())
local out = {}
for i = 1, #ARGV do
  out[i] = standing(ARGV[i], shared)
end
return out
