package purchase

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
)

// AdjustStock sets the activity's total stock to total during a sale, safely:
// under the activity's lock (no batch of this or another instance deducts
// meanwhile), with the fence claimed in the database (no purchase whose lease
// ran out can write behind it), never below the units sold, and with Redis
// loaded with total - sold only while the lock is still held (LoadIfHeld), as
// Reconcile does. The database is changed first: when the Redis load fails
// after it, the answer is 503 and a reconcile (or preload) loads the stock
// from the new total.
func (s *Service) AdjustStock(ctx context.Context, id, total int64) (seckill.StockAdjustment, error) {
	if total < 1 || total > seckill.MaxTotalStock {
		return seckill.StockAdjustment{}, seckill.Errorf(seckill.EInvalid, "total_stock must be between 1 and %d", seckill.MaxTotalStock)
	}
	if _, err := s.activity(ctx, id); err != nil {
		return seckill.StockAdjustment{}, err
	}
	lk, release, err := s.holdActivity(ctx, id)
	if err != nil {
		return seckill.StockAdjustment{}, err
	}
	defer release()
	lease := lk.Context()
	if _, err := s.orders.ClaimFence(lease, id, lk.Fence()); err != nil {
		return seckill.StockAdjustment{}, seckill.Unavailable("could not claim the activity in the database", err)
	}
	epoch := s.soldOut.epoch(id)
	// Read under the claim: no other adjustment can change it until we are done.
	a, err := s.orders.Activity(lease, id)
	if err != nil {
		return seckill.StockAdjustment{}, seckill.DatabaseDown(err)
	}
	sold, err := s.orders.SetTotalStock(lease, id, lk.Fence(), total)
	switch {
	case errors.Is(err, order.ErrBelowSold):
		return seckill.StockAdjustment{}, &seckill.Error{Code: seckill.EInvalid,
			Message: fmt.Sprintf("total_stock %d is below the %d units already sold", total, sold), Err: err}
	case err != nil:
		return seckill.StockAdjustment{}, seckill.Unavailable("the order database did not change the stock", err)
	}
	before := a.TotalStock
	a.TotalStock = total
	s.activities.put(a)
	after := total - sold
	if err := s.loadHeld(lease, lk, id, after, epoch); err != nil {
		return seckill.StockAdjustment{}, seckill.Unavailable("the total stock changed, but Redis was not loaded with it: reconcile the activity", err)
	}
	s.log.InfoContext(ctx, "stock adjusted", "activity_id", id, "before", before, "total_stock", total, "sold", sold, "remaining", after)
	return seckill.StockAdjustment{ActivityID: id, Before: before, TotalStock: total, Sold: sold, Remaining: after}, nil
}

// holdActivity obtains the activity's lock as Reconcile does: the fence
// counter seeded past the database's first (after Redis lost its data it
// starts again from zero), then a renewed lease. release gives it back.
func (s *Service) holdActivity(ctx context.Context, id int64) (lk *lock.Lock, release func(), err error) {
	key := keys.Lock(s.cfg.KeyPrefix, id)
	dbFence, err := s.orders.Fence(ctx, id)
	if err != nil {
		return nil, nil, seckill.DatabaseDown(err)
	}
	if err := s.locks.SeedFence(ctx, key, dbFence); err != nil {
		return nil, nil, seckill.Unavailable("Redis did not answer", err)
	}
	lk, err = s.locks.Obtain(ctx, key, s.cfg.LockTTL,
		&lock.ObtainOptions{Wait: 2*s.cfg.LockTTL + s.cfg.LockWait, MaxBackoff: lockPoll, AutoRenew: true})
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		return nil, nil, seckill.Busy("purchases kept the activity's lock busy; try again", err)
	case err != nil:
		return nil, nil, seckill.Unavailable("Redis did not answer", err)
	}
	return lk, func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "lock release", "activity_id", id, "fence", lk.Fence(), "err", err)
		}
	}, nil
}
