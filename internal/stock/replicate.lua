-- Vouches for an earlier write of the activity before its caller WAITs for
-- replicas: run on the primary that holds the activity's slot, in the same
-- connection as the WAIT that follows it.
-- KEYS[1]: the key the earlier write left (the lock, or a deduct's receipt).
-- KEYS[2]: the activity's replication marker.
-- ARGV[1]: KEYS[1]'s expected value, or "" for "exists"; ARGV[2]: the
-- marker's lifetime in ms.
-- WAIT counts the replicas that have the connection's own last write, and
-- replication is ordered: so the marker written here reaching N replicas
-- means the earlier write, which this node still holds, did too. Returns 1;
-- 0 when this node does not hold the earlier write (a failover lost it, or
-- the client now talks to another node), writing nothing.
local v = redis.call('GET', KEYS[1])
if not v or (ARGV[1] ~= '' and v ~= ARGV[1]) then
  return 0
end
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
