package httpapi

import (
	"math"
	"net/netip"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"golang.org/x/time/rate"
)

// newBucket returns a token bucket of r per second, or nil when r is off.
func newBucket(r float64, burst int) *rate.Limiter {
	if r <= 0 || math.IsNaN(r) {
		return nil
	}
	return rate.NewLimiter(rate.Limit(r), max(burst, 1))
}

// refillTime is how long a drained bucket of lim takes to hold one token: the
// Retry-After of a rejected attempt.
func refillTime(lim *rate.Limiter) time.Duration {
	return time.Duration(float64(time.Second) / float64(lim.Limit()))
}

// userBuckets keeps one token bucket per user, forgetting the least recently
// used beyond capacity so a flood of distinct ids cannot grow memory. A user
// whose bucket was forgotten starts afresh, which costs nothing when the
// bucket had refilled, as the least recently used one usually has.
//
// A bucket that has refilled is forgotten before capacity too (keepFull):
// a fresh bucket is full, so forgetting a full one changes no answer, and a
// sale's crowd of one-time buyers then holds only the buckets still
// refilling (at 50 a second, one attempt's token is back in 20 ms) instead
// of capacity's worth, about 200 bytes each (100,000 buckets were a fifth of
// the service's RSS under a load test of 1,024 connections).
type userBuckets = keyedBuckets[int64]

// keepFull is how many buckets userBuckets keeps however full they are: the
// most recently used, so a bucket just handed out is not forgotten before
// it is charged.
const keepFull = 1024

// keyedBuckets keeps one token bucket per key (a user id, a client
// address), the least recently used forgotten first beyond capacity, and
// with keepFull > 0 the least recently used full ones beyond keepFull.
type keyedBuckets[K comparable] struct {
	limit    rate.Limit
	burst    int
	byKey    *lru.Cache[K, *rate.Limiter]
	keepFull int // 0: forget at capacity only
}

// newUserBuckets returns per-user buckets of r per second, or nil when r is off.
func newUserBuckets(r float64, burst, capacity int) *userBuckets {
	u := newKeyedBuckets[int64](r, burst, capacity)
	if u != nil {
		u.keepFull = keepFull
	}
	return u
}

// newKeyedBuckets returns per-key buckets of r per second, or nil when r is off.
func newKeyedBuckets[K comparable](r float64, burst, capacity int) *keyedBuckets[K] {
	if r <= 0 || math.IsNaN(r) {
		return nil
	}
	if capacity <= 0 {
		capacity = DefaultMaxTrackedUsers
	}
	byKey, _ := lru.New[K, *rate.Limiter](capacity) // fails only for a capacity below 1
	return &keyedBuckets[K]{limit: rate.Limit(r), burst: max(burst, 1), byKey: byKey}
}

// get returns the key's bucket, creating it full.
func (u *keyedBuckets[K]) get(key K) *rate.Limiter {
	if lim, ok := u.byKey.Get(key); ok {
		return lim
	}
	u.forgetFull(time.Now())
	lim := rate.NewLimiter(u.limit, u.burst)
	if prev, ok, _ := u.byKey.PeekOrAdd(key, lim); ok {
		return prev // another request created it meanwhile
	}
	return lim
}

// forgetFull forgets at most the two least recently used buckets while they
// are full at now and more than keepFull are kept: two for every bucket
// created, so the buckets shrink back to the refilling ones after a crowd.
// A request that takes a bucket at the very moment it is forgotten charges
// one then dropped: its user gets one attempt more, as when a bucket is
// forgotten at capacity.
func (u *keyedBuckets[K]) forgetFull(now time.Time) {
	for range 2 {
		if u.keepFull <= 0 || u.byKey.Len() <= u.keepFull {
			return
		}
		key, lim, ok := u.byKey.GetOldest()
		if !ok || lim.TokensAt(now) < float64(u.burst) {
			return
		}
		u.byKey.Remove(key)
	}
}

// addressKey is what per-address limits count a client address under: an
// IPv4 address itself, an IPv6 address by its /64, since one host is
// usually given a whole /64 and would otherwise guess from 2^64 addresses.
func addressKey(ip string) string {
	a, err := netip.ParseAddr(ip)
	if err != nil || a.Is4() || a.Is4In6() {
		return ip
	}
	p, err := a.Prefix(64)
	if err != nil {
		return ip
	}
	return p.String()
}
