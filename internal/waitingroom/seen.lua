-- Records that an admitted buyer was seen now (a poll, a purchase), by
-- Redis's clock, the one admit.lua's idle lapse reads.
-- KEYS[1]: when each admitted buyer was last seen (sorted set: user -> ms).
-- ARGV[1]: the user; ARGV[2]: how long after now, in ms, the buyer counts as
-- seen still (a purchase in flight: they are busy buying until it could
-- have reached its deduct, without polling). Only a user in the set
-- (admitted and not yet lapsed) is updated: XX never adds one; GT never
-- moves a time already recorded back (a poll during a purchase).
return redis.call('ZADD', KEYS[1], 'XX', 'GT', 'CH', clock() + tonumber(ARGV[2] or 0), ARGV[1])
