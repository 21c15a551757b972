package books

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill-oss/seckill"
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
	if _, err := s.catalog.Activity(ctx, id); err != nil {
		return seckill.StockAdjustment{}, err
	}
	lk, release, err := s.hold(ctx, id)
	if err != nil {
		return seckill.StockAdjustment{}, err
	}
	defer release()
	lease := lk.Context()
	if _, err := s.orders.Activities.ClaimFence(lease, id, lk.Fence()); err != nil {
		return seckill.StockAdjustment{}, seckill.Unavailable("could not claim the activity in the database", err)
	}
	epoch := s.sales.SoldOutEpoch(id)
	// Read under the claim: no other adjustment can change it until we are done.
	a, err := s.orders.Activities.Activity(lease, id)
	if err != nil {
		return seckill.StockAdjustment{}, seckill.DatabaseDown(err)
	}
	sold, err := s.orders.Activities.SetTotalStock(lease, id, lk.Fence(), total)
	switch {
	case errors.Is(err, order.ErrBelowSold):
		return seckill.StockAdjustment{}, &seckill.Error{Code: seckill.EInvalid,
			Message: fmt.Sprintf("total_stock %d is below the %d units already sold", total, sold), Err: err}
	case err != nil:
		return seckill.StockAdjustment{}, seckill.Unavailable("the order database did not change the stock", err)
	}
	before := a.TotalStock
	a.TotalStock = total
	s.catalog.Put(a)
	after := total - sold
	if err := s.loadHeld(lease, lk, a, after, epoch); err != nil {
		return seckill.StockAdjustment{}, seckill.Unavailable("the total stock changed, but Redis was not loaded with it: reconcile the activity", err)
	}
	s.log.InfoContext(ctx, "stock adjusted", "activity_id", id, "before", before, "total_stock", total, "sold", sold, "remaining", after)
	return seckill.StockAdjustment{ActivityID: id, Before: before, TotalStock: total, Sold: sold, Remaining: after}, nil
}
