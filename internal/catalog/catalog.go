// Package catalog is the activities as this process knows them: a cache
// over the order store that the purchase path and the books side share, so
// that a buyer's cheap rejections (unknown id, outside the window) cost no
// database round trip, and a change the books side makes (a new activity, a
// price, a room, a total) is seen at once by this process's purchases.
package catalog

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
)

// Catalog looks activities up, from memory where it may. It is safe for
// concurrent use.
type Catalog struct {
	orders *order.Store
	now    func() time.Time
	cache  *activityCache
}

// New returns a catalog over orders; now nil means time.Now.
func New(orders *order.Store, now func() time.Time) *Catalog {
	if now == nil {
		now = time.Now
	}
	return &Catalog{orders: orders, now: now, cache: newActivityCache()}
}

// Activity returns the activity, from memory when it holds it, or
// activity_not_found when memory knows the database has no such id.
func (c *Catalog) Activity(ctx context.Context, id int64) (seckill.Activity, error) {
	if a, ok := c.cache.get(id); ok {
		return a, nil
	}
	if c.cache.knownUnknown(id, c.now()) {
		return seckill.Activity{}, seckill.NoActivity(id)
	}
	return c.Fresh(ctx, id)
}

// Fresh reads the activity from the database, not memory, and remembers
// it: its total stock may have been adjusted by another instance.
func (c *Catalog) Fresh(ctx context.Context, id int64) (seckill.Activity, error) {
	a, err := c.orders.Activities.Activity(ctx, id)
	switch {
	case errors.Is(err, order.ErrActivityNotFound):
		if highest, herr := c.orders.Activities.HighestActivityID(ctx); herr == nil {
			c.cache.markUnknown(id, highest, c.now())
		}
		return seckill.Activity{}, seckill.NoActivity(id)
	case err != nil:
		return seckill.Activity{}, seckill.DatabaseDown(err)
	}
	c.cache.put(a)
	return a, nil
}

// Visible returns the activity if buyers may see it: an unannounced one is
// activity_not_found until its start.
func (c *Catalog) Visible(ctx context.Context, id int64) (seckill.Activity, error) {
	a, err := c.Activity(ctx, id)
	if err == nil && a.Unannounced && c.now().Before(a.StartsAt) {
		return seckill.Activity{}, seckill.NoActivity(id)
	}
	return a, err
}

// Put remembers a as the activity's current state: the books side changed
// it on this instance.
func (c *Catalog) Put(a seckill.Activity) { c.cache.put(a) }
