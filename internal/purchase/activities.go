package purchase

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

// activityCache holds the activities for the cheap rejections that must not
// cost a database round trip. Only the total stock changes (AdjustStock),
// and what depends on it for safety (reconcile, audit) reads it fresh.
//
// It also remembers, for unknownTTL, the ids the database did not know, so
// that probing unknown ids (a scanner, a client with a stale link) costs one
// query a second per id, not one per request. An activity created on this
// instance is found at once: the activity put in the cache is looked up
// before the unknown ids. One created on another instance is found here at
// most unknownTTL later.
type activityCache struct {
	m sync.Map // int64 -> seckill.Activity

	mu      sync.Mutex
	unknown map[int64]time.Time // id -> when the database said it had none
}

// unknownTTL is how long an id the database did not know is answered
// activity_not_found from memory.
const unknownTTL = time.Second

// maxUnknown bounds the remembered unknown ids (about 400 KB): beyond it,
// after the expired ones are dropped, an unknown id is not remembered and
// costs its query.
const maxUnknown = 10_000

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

// knownUnknown reports whether the database said less than unknownTTL ago
// that it had no activity id.
func (c *activityCache) knownUnknown(id int64, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	at, ok := c.unknown[id]
	return ok && now.Sub(at) < unknownTTL && !now.Before(at)
}

// markUnknown remembers that the database had no activity id at now.
func (c *activityCache) markUnknown(id int64, now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.unknown == nil {
		c.unknown = make(map[int64]time.Time)
	}
	if len(c.unknown) >= maxUnknown {
		for k, at := range c.unknown {
			if now.Sub(at) >= unknownTTL || now.Before(at) {
				delete(c.unknown, k)
			}
		}
		if len(c.unknown) >= maxUnknown {
			return
		}
	}
	c.unknown[id] = now
}

// activity returns the activity, from the cache when it holds it, or
// activity_not_found when the database did not know the id a moment ago.
func (s *Service) activity(ctx context.Context, id int64) (seckill.Activity, error) {
	if a, ok := s.activities.get(id); ok {
		return a, nil
	}
	if s.activities.knownUnknown(id, s.now()) {
		return seckill.Activity{}, activityNotFound(id)
	}
	return s.freshActivity(ctx, id)
}

// freshActivity reads the activity from the database, not the cache, and
// caches it: its total stock may have been adjusted by another instance.
func (s *Service) freshActivity(ctx context.Context, id int64) (seckill.Activity, error) {
	a, err := s.orders.Activity(ctx, id)
	switch {
	case errors.Is(err, order.ErrActivityNotFound):
		s.activities.markUnknown(id, s.now())
		return seckill.Activity{}, activityNotFound(id)
	case err != nil:
		return seckill.Activity{}, seckill.Unavailable("the order database did not answer", err)
	}
	s.activities.put(a)
	return a, nil
}

func activityNotFound(id int64) error {
	return seckill.Errorf(seckill.EActivityNotFound, "no activity %d", id)
}
