-- Records that query ARGV[1] of an order's payment was answered and its
-- answer written, in the hash that counts the order's queries (KEYS[1]:
-- "started", "answered"), and keeps the hash ARGV[2] ms longer.
-- Only while the hash lives: an "answered" number without the "started"
-- count it belongs to would let a callback that arrived after the count
-- expired (reading 0 started) take this older answer as one made after it
-- arrived, and answer a payment that just landed from it.
-- Returns 1 when recorded, 0 when the count had expired.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return 0
end
redis.call('HSET', KEYS[1], 'answered', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
