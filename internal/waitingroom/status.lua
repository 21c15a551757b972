-- Reads one user's standing in an activity's waiting room, without writing.
-- KEYS: as join.lua, and KEYS[5], KEYS[6]: the activity's buyer set and
-- stock hash.
-- ARGV[1]: the user.
-- Returns {on ("" when Redis has no room at all), now, opens, starts, ends, closed, rank, until, ended,
-- buyer, waiting, admitted, rate, remaining, pace, hold}: rank is the user's 0-based rank in the
-- line (-1: not in it); until the end of the user's open admission in unix
-- ms (-1: none); ended the user's end ("" none); buyer 1 when the user is in
-- the buyer set; waiting and admitted the sizes of the line and of the open
-- admissions; rate the measured admissions per second, as a string;
-- remaining the units left (-1: the stock is not loaded); pace the
-- admissions a second the last step allowed (a string); hold the units one
-- admission holds (the activity's per-user limit).
local user = ARGV[1]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local room = redis.call('HMGET', KEYS[1], 'on', 'opens', 'starts', 'ends', 'closed', 'rate', 'pace', 'hold')
local rank = redis.call('ZRANK', KEYS[2], user) or -1
local admitted = redis.call('ZSCORE', KEYS[3], user)
return {room[1] or '', now, room[2] or '0', room[3] or '0', room[4] or '0', room[5] or '',
  rank, admitted and tonumber(admitted) or -1, redis.call('HGET', KEYS[4], user) or '',
  redis.call('SISMEMBER', KEYS[5], user), redis.call('ZCARD', KEYS[2]),
  redis.call('ZCARD', KEYS[3]), room[6] or '0',
  tonumber(redis.call('HGET', KEYS[6], 'remaining') or '-1'), room[7] or '0',
  tonumber(room[8] or '1')}
