package books

import (
	"context"
	"errors"
	"fmt"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/stock"
)

// Reconcile sets the activity's stock in Redis to total_stock minus the
// units sold in the database (created and paid orders, as the activity row
// keeps them), under the activity's lock, and reports what it changed. It is safe at any time, during a sale and after Redis lost its
// data: the lock keeps live purchases out, and the fence it claims in the
// database keeps out any purchase whose lease has expired but which has not
// written yet.
func (s *Service) Reconcile(ctx context.Context, id int64) (seckill.Reconciliation, error) {
	a, err := s.catalog.Activity(ctx, id)
	if err != nil {
		return seckill.Reconciliation{}, err
	}
	lk, release, err := s.hold(ctx, id)
	if err != nil {
		return seckill.Reconciliation{}, err
	}
	defer release()
	lease := lk.Context()
	n, err := s.orders.Activities.ClaimFence(lease, id, lk.Fence())
	if err != nil {
		return seckill.Reconciliation{}, seckill.Unavailable("could not claim the activity in the database", err)
	}
	// The total as of the claim: AdjustStock on another instance may have
	// changed it since this one cached it, and only under a fence.
	if a, err = s.catalog.Fresh(lease, id); err != nil {
		return seckill.Reconciliation{}, err
	}
	epoch := s.sales.SoldOutEpoch(id)
	before, err := s.stock.Remaining(lease, id)
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		before = -1
	case err != nil:
		return seckill.Reconciliation{}, seckill.RedisDown(err)
	}
	after := max(a.TotalStock-n, 0)
	if err := s.loadHeld(lease, lk, a, after, epoch); err != nil {
		return seckill.Reconciliation{}, seckill.Unavailable("Redis did not answer, or the lease ended; stock not loaded", err)
	}
	r := seckill.Reconciliation{ActivityID: id, TotalStock: a.TotalStock, Orders: n, Before: before, After: after, Changed: before != after, Fence: lk.Fence()}
	if r.Changed {
		s.m.reconciled.Inc()
		s.log.InfoContext(ctx, "stock reconciled", "activity_id", id, "orders", n, "before", r.LoadedBefore(), "after", after) // null, as the API says, when nothing was loaded
	}
	return r, nil
}

// hold obtains the activity's lock for a change of its books, with a fence
// newer than any order the database holds, renewed while it works (a slow
// database must not let the lease run out under it). After Redis lost its
// data the fence counter starts again from zero; raising it past the
// database's first keeps every new grant newer than any order already
// written. release gives the lock back.
func (s *Service) hold(ctx context.Context, id int64) (lk *lock.Lock, release func(), err error) {
	key := s.stock.Keys().Lock(id)
	dbFence, err := s.orders.Activities.Fence(ctx, id)
	if err != nil {
		return nil, nil, seckill.DatabaseDown(err)
	}
	if err := s.locks.SeedFence(ctx, key, dbFence); err != nil {
		return nil, nil, seckill.RedisDown(err)
	}
	lk, err = s.locks.Obtain(ctx, key, s.cfg.Lease.TTL,
		&lock.ObtainOptions{Wait: 2*s.cfg.Lease.TTL + s.cfg.Lease.Wait, MaxBackoff: lockPoll, AutoRenew: true})
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		return nil, nil, seckill.Busy("purchases kept the activity's lock busy; try again", err)
	case err != nil:
		return nil, nil, seckill.RedisDown(err)
	}
	return lk, func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "lock release", "activity_id", id, "fence", lk.Fence(), "err", err)
		}
	}, nil
}

// loadHeld loads the activity's stock as remaining units under grant lk, and
// tells the purchase path (its sold-out mark, unless cleared since epoch);
// the sale's stop (halt) as the database has it is written with it.
// The load is checked against the lock in the same step: one that reaches
// Redis after the lease ended must not overwrite a newer holder's deducts.
// The activity's room, as the database has it, is written first: stock
// loaded into a Redis that lost the room would sell without admissions.
func (s *Service) loadHeld(lease context.Context, lk *lock.Lock, a seckill.Activity, remaining int64, epoch uint64) error {
	activityID := a.ID
	if a.WaitingRoom != nil {
		if err := s.rooms.Open(lease, a); err != nil {
			return fmt.Errorf("waiting room not restored, so no stock loaded: %w", err)
		}
	}
	if err := s.stock.LoadIfHeld(lease, activityID, remaining, lk.Fence(), lk.Value(), haltOf(a, s.now())); err != nil {
		return err
	}
	s.sales.StockLoaded(activityID, remaining, epoch)
	return nil
}
