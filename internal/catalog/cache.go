package catalog

import (
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/seckill-oss/seckill"
)

// activityCache holds the activities for the cheap rejections that must not
// cost a database round trip. Only the total stock, the price and the
// waiting room change, and what depends on them for safety (reconcile,
// audit, stock changes) reads the activity fresh.
//
// It also answers ids the database does not know without asking it again,
// so that probing unknown ids (a scanner walking ids, a client with a stale
// link) costs next to nothing. Ids are handed out in increasing order: after
// a miss the cache learns the highest id there is, and any id above it is
// unknown for unknownTTL, whatever the id, so a walk over ids costs two
// queries a second in all, not one per id. An id below the highest that the
// database lacks (a gap an aborted insert left) is remembered for gapTTL. An
// activity created on this instance is found at once (the activities put in
// the cache are looked up first); one created on another instance is found
// here at most unknownTTL later.
type activityCache struct {
	m sync.Map // int64 -> seckill.Activity

	mu        sync.Mutex
	highest   int64                        // the highest id the database held at highestAt
	highestAt time.Time                    // zero: not learned yet
	gaps      *lru.Cache[int64, time.Time] // id -> when the database lacked it
}

func newActivityCache() *activityCache {
	gaps, _ := lru.New[int64, time.Time](maxGaps) // fails only for a size below 1
	return &activityCache{gaps: gaps}
}

// unknownTTL is how long ids above the highest one are answered
// activity_not_found from memory.
const unknownTTL = time.Second

// gapTTL is how long an id below the highest that the database lacks is
// answered from memory. Not for ever: on a Galera cluster written through
// more than one node, an id below another node's highest may still come.
const gapTTL = time.Minute

// maxGaps bounds the remembered gaps (about 400 KB): beyond it the least
// recently seen is forgotten and costs its query again.
const maxGaps = 10_000

func (c *activityCache) get(id int64) (seckill.Activity, bool) {
	a, ok := c.m.Load(id)
	if !ok {
		return seckill.Activity{}, false
	}
	return a.(seckill.Activity), true
}

func (c *activityCache) put(a seckill.Activity) {
	c.m.Store(a.ID, a)
}

// knownUnknown reports whether the database is known to have no activity
// id: above the highest id learned less than unknownTTL ago, or a gap seen
// less than gapTTL ago.
func (c *activityCache) knownUnknown(id int64, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id > c.highest {
		return !c.highestAt.IsZero() && within(now, c.highestAt, unknownTTL)
	}
	at, ok := c.gaps.Get(id)
	return ok && within(now, at, gapTTL)
}

// within reports whether now is at or after at and less than ttl later.
func within(now, at time.Time, ttl time.Duration) bool {
	return !now.Before(at) && now.Sub(at) < ttl
}

// markUnknown remembers that at now the database had no activity id and
// highest was its highest id.
func (c *activityCache) markUnknown(id, highest int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.highest, c.highestAt = max(c.highest, highest), now
	if id > highest {
		return
	}
	c.gaps.Add(id, now)
}
