-- Loads an activity's stock only while the activity's lock is still held by
-- the grant the load runs under: a load that reaches Redis after its lease
-- ended (a slow reconcile, a late command) must not overwrite the stock a
-- newer holder has been deducting from.
-- KEYS[1]: the activity's stock hash; KEYS[2]: the activity's lock (same slot).
-- ARGV[1]: the lock's value for this grant, "<token>:<fence>";
-- ARGV[2]: the units to load; ARGV[3]: the epoch to stamp;
-- ARGV[4]: since when the sale is paused (unix ms), "" when it is not;
-- ARGV[5]: "1" when ops ended it, "" otherwise. The deduct checks both
-- flags (deduct.lua); the database keeps them, and a load writes them as it
-- has them, so a Redis that lost them gets them back with the stock.
-- Returns 1 loaded, 0 the lock is not this grant's (nothing changed).
-- "loaded" keeps what the epoch started with, for the stock's ledger
-- (package doc).
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], STOCK.remaining, ARGV[2], STOCK.epoch, ARGV[3], STOCK.loaded, ARGV[2])
if ARGV[4] ~= '' then
  redis.call('HSETNX', KEYS[1], STOCK.paused, ARGV[4])
else
  redis.call('HDEL', KEYS[1], STOCK.paused)
end
if ARGV[5] ~= '' then
  redis.call('HSET', KEYS[1], STOCK.ended, '1')
else
  redis.call('HDEL', KEYS[1], STOCK.ended)
end
return 1
