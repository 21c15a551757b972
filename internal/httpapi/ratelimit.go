package httpapi

import (
	"container/list"
	"math"
	"sync"
	"time"

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
type userBuckets struct {
	limit    rate.Limit
	burst    int
	capacity int

	mu    sync.Mutex
	order *list.List              // of *userBucket, most recently used first
	byID  map[int64]*list.Element // user id -> element of order
}

type userBucket struct {
	userID int64
	lim    *rate.Limiter
}

// newUserBuckets returns per-user buckets of r per second, or nil when r is off.
func newUserBuckets(r float64, burst, capacity int) *userBuckets {
	if r <= 0 || math.IsNaN(r) {
		return nil
	}
	if capacity <= 0 {
		capacity = DefaultMaxTrackedUsers
	}
	return &userBuckets{
		limit:    rate.Limit(r),
		burst:    max(burst, 1),
		capacity: capacity,
		order:    list.New(),
		byID:     make(map[int64]*list.Element),
	}
}

// get returns the user's bucket, creating it full.
func (u *userBuckets) get(userID int64) *rate.Limiter {
	u.mu.Lock()
	defer u.mu.Unlock()
	if e, ok := u.byID[userID]; ok {
		u.order.MoveToFront(e)
		return e.Value.(*userBucket).lim
	}
	if u.order.Len() >= u.capacity {
		oldest := u.order.Back()
		u.order.Remove(oldest)
		delete(u.byID, oldest.Value.(*userBucket).userID)
	}
	b := &userBucket{userID: userID, lim: rate.NewLimiter(u.limit, u.burst)}
	u.byID[userID] = u.order.PushFront(b)
	return b.lim
}
