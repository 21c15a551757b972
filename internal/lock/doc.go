// Package lock is a Redis lease lock that stays safe when the network and the
// clock misbehave.
//
// It exists because of two production incidents (docs/SEEDS.md): a release
// that deleted another holder's lock, and an acquire that timed out on the
// client but had succeeded in Redis, locking a user out for the whole TTL.
// The common libraries each leave one of these holes open; this package
// closes them:
//
//   - Obtain is one round trip: a Lua script sets the lock, with a random
//     owner token and a TTL, and issues a fencing token in the same step.
//   - Release and Extend are compare-and-delete and compare-and-PEXPIRE
//     scripts: only the owner can remove or extend its lock. Release runs on
//     a context detached from the caller's cancellation, with its own
//     timeout, so a cancelled request still releases. A release leaves a
//     marker for ReleaseTimeout, so that a resend of a release that landed
//     (go-redis retries a command whose reply timed out) reports "released",
//     not "expired".
//   - When an acquire fails with a timeout or a connection error, Obtain reads
//     the key back (GET and compare, retried) to learn whether it landed. If
//     it landed, Obtain returns the lock. Otherwise (it cannot tell, or the
//     key is not ours yet) a background compare-and-delete, owned by the
//     Client, watches the key for a TTL and removes it should it become ours:
//     an acquire that timed out on the client can still land later (a TCP
//     retransmit, a resend). No lock is left stranded for its TTL by a
//     client-side timeout.
//   - Lock.Context is a lease context: it is done before the lease can expire
//     in Redis (measured from before the acquire was sent, on the monotonic
//     clock, minus a drift margin), or as soon as the lock is found lost.
//     Derive every deadline taken under the lock from it.
//
// # Keys and fences
//
// Every grant carries a fence that strictly increases per key. The counter
// lives in its own key in the lock's Cluster hash slot: key+":fence" when the
// key has a {hash tag}, such as "seckill:{act:7}:lock"; otherwise
// "{"+key+"}:fence", whose tag is the whole lock key and so hashes to the
// lock's slot. (A key without a hash tag must then not contain '}'.) The lock
// itself holds "<token>:<fence>", which lets a retried acquire find its own
// grant and the same fence.
//
// The counter is never expired. If Redis loses it (a failover before
// replication, a restart without persistence), it starts again from 1, and
// fences would go backwards. Fences are meant to be checked where the
// protected data lives (the order service writes only if fence > the highest
// fence stored), so a lost counter makes writes fail rather than succeed
// twice; to restore progress, seed the counter from the highest fence the
// database has seen with SeedFence, at start-up and whenever a write is
// refused as stale.
//
// Redis replication is asynchronous: a failover can lose a lock as well as
// its fence. The fence check is what keeps data correct across that.
package lock
