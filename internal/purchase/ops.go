package purchase

import (
	"context"
	"errors"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// Activity returns the activity and what is left of it. Remaining stock
// comes from Redis; when Redis has none loaded or does not answer, it is
// computed from the database.
func (s *Service) Activity(ctx context.Context, id int64) (seckill.ActivityView, error) {
	a, err := s.activity(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	return s.view(ctx, a)
}

// BuyerActivity is Activity as a buyer may see it: an unannounced activity
// is activity_not_found until its start.
func (s *Service) BuyerActivity(ctx context.Context, id int64) (seckill.ActivityView, error) {
	a, err := s.VisibleActivity(ctx, id)
	if err != nil {
		return seckill.ActivityView{}, err
	}
	return s.view(ctx, a)
}

// VisibleActivity returns the activity if buyers may see it: an
// unannounced one is activity_not_found until its start.
func (s *Service) VisibleActivity(ctx context.Context, id int64) (seckill.Activity, error) {
	a, err := s.activity(ctx, id)
	if err == nil && a.Unannounced && s.now().Before(a.StartsAt) {
		return seckill.Activity{}, activityNotFound(id)
	}
	return a, err
}

// view is the activity with its live stock and room.
func (s *Service) view(ctx context.Context, a seckill.Activity) (seckill.ActivityView, error) {
	id := a.ID
	remaining, err := s.stock.Remaining(ctx, id)
	if err != nil {
		n, cerr := s.orders.CountOrders(ctx, id)
		if cerr != nil {
			return seckill.ActivityView{}, seckill.Unavailable("neither Redis nor the database answered", errors.Join(err, cerr))
		}
		remaining = max(a.TotalStock-n, 0)
	}
	return seckill.ActivityView{Activity: a, Remaining: remaining, Status: a.StatusAt(s.now(), remaining), Room: s.roomView(ctx, a)}, nil
}

// MyOrder returns the user's order for the activity.
func (s *Service) MyOrder(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	if _, err := s.VisibleActivity(ctx, activityID); err != nil {
		return seckill.Order{}, err
	}
	o, err := s.orders.OrderByUser(ctx, activityID, userID)
	switch {
	case errors.Is(err, order.ErrNotFound):
		return seckill.Order{}, seckill.Errorf(seckill.EOrderNotFound, "you hold no order for activity %d", activityID)
	case err != nil:
		return seckill.Order{}, seckill.DatabaseDown(err)
	}
	return o, nil
}

// CreateActivity validates and stores a new activity and loads its stock
// into Redis. A failure to load leaves the activity created; preloading it
// later is safe.
func (s *Service) CreateActivity(ctx context.Context, a seckill.Activity) (seckill.ActivityView, error) {
	if err := a.Validate(); err != nil {
		return seckill.ActivityView{}, err
	}
	if err := s.priceRequired(a.PriceMinor); err != nil {
		return seckill.ActivityView{}, err
	}
	a.StartsAt, a.EndsAt = a.StartsAt.UTC(), a.EndsAt.UTC()
	if a.WaitingRoom != nil {
		w, err := NewWaitingRoom(a.StartsAt, a.WaitingRoom.OpensAt)
		if err != nil {
			return seckill.ActivityView{}, err
		}
		a.WaitingRoom = w
	}
	created, err := s.orders.CreateActivity(ctx, a)
	if err != nil {
		return seckill.ActivityView{}, seckill.Unavailable("the order database failed; the activity was not created", err)
	}
	s.activities.put(created)
	if _, err := s.Reconcile(ctx, created.ID); err != nil {
		s.log.WarnContext(ctx, "stock of new activity not loaded; preload it", "activity_id", created.ID, "err", err)
	}
	return seckill.ActivityView{Activity: created, Remaining: created.TotalStock, Status: created.StatusAt(s.now(), created.TotalStock),
		Room: s.roomView(ctx, created)}, nil
}

// Preload loads the activity's stock into Redis as total_stock minus the
// orders in the database. It is safe at any time: see Reconcile.
func (s *Service) Preload(ctx context.Context, id int64) (remaining int64, err error) {
	r, err := s.Reconcile(ctx, id)
	return r.After, err
}

// Audit reports whether the activity's books balance.
func (s *Service) Audit(ctx context.Context, id int64) (seckill.Audit, error) {
	a, err := s.freshActivity(ctx, id) // the total may have been adjusted elsewhere
	if err != nil {
		return seckill.Audit{}, err
	}
	n, err := s.orders.CountOrders(ctx, id)
	if err != nil {
		return seckill.Audit{}, seckill.DatabaseDown(err)
	}
	remaining, err := s.stock.Remaining(ctx, id)
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		remaining = 0
	case err != nil:
		return seckill.Audit{}, seckill.Unavailable("Redis did not answer", err)
	}
	out := seckill.Audit{
		ActivityID:     id,
		TotalStock:     a.TotalStock,
		Orders:         n,
		RedisRemaining: remaining,
		Oversold:       n > a.TotalStock,
		Consistent:     n+remaining == a.TotalStock,
	}
	if a.WaitingRoom != nil {
		if _, open, err := s.rooms.Sizes(ctx, id); err == nil {
			out.AdmittedOpen = open
		}
		if !s.now().Before(a.StartsAt) {
			out.DrawSeed = a.WaitingRoom.Seed
		}
	}
	return out, nil
}

// Reconcile sets the activity's stock in Redis to total_stock minus the
// units sold in the database (created and paid orders, as the activity row
// keeps them), under the activity's lock, and reports what it changed. It is safe at any time, during a sale and after Redis lost its
// data: the lock keeps live purchases out, and the fence it claims in the
// database keeps out any purchase whose lease has expired but which has not
// written yet.
func (s *Service) Reconcile(ctx context.Context, id int64) (seckill.Reconciliation, error) {
	a, err := s.activity(ctx, id)
	if err != nil {
		return seckill.Reconciliation{}, err
	}
	lk, err := s.reconcileGrant(ctx, id)
	if err != nil {
		return seckill.Reconciliation{}, err
	}
	defer func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "lock release", "activity_id", id, "fence", lk.Fence(), "err", err)
		}
	}()
	lease := lk.Context()
	n, err := s.orders.ClaimFence(lease, id, lk.Fence())
	if err != nil {
		return seckill.Reconciliation{}, seckill.Unavailable("could not claim the activity in the database", err)
	}
	// The total as of the claim: AdjustStock on another instance may have
	// changed it since this one cached it, and only under a fence.
	if a, err = s.freshActivity(lease, id); err != nil {
		return seckill.Reconciliation{}, err
	}
	epoch := s.soldOut.epoch(id)
	before, err := s.stock.Remaining(lease, id)
	switch {
	case errors.Is(err, stock.ErrNotLoaded):
		before = -1
	case err != nil:
		return seckill.Reconciliation{}, seckill.Unavailable("Redis did not answer", err)
	}
	after := max(a.TotalStock-n, 0)
	if err := s.loadHeld(lease, lk, id, after, epoch); err != nil {
		return seckill.Reconciliation{}, seckill.Unavailable("Redis did not answer, or the lease ended; stock not loaded", err)
	}
	if a.WaitingRoom != nil {
		// The room as the database has it, in case Redis lost it.
		if err := s.rooms.Open(lease, a); err != nil {
			s.log.WarnContext(ctx, "waiting room not written to Redis; reconcile again", "activity_id", id, "err", err)
		}
	}
	r := seckill.Reconciliation{ActivityID: id, TotalStock: a.TotalStock, Orders: n, Before: before, After: after, Changed: before != after, Fence: lk.Fence()}
	if r.Changed {
		s.m.reconciled.Inc()
		s.log.InfoContext(ctx, "stock reconciled", "activity_id", id, "orders", n, "before", r.LoadedBefore(), "after", after) // null, as the API says, when nothing was loaded
	}
	return r, nil
}

// reconcileGrant obtains the activity's lock for a reconciliation, with a
// fence newer than any order the database holds, renewed while it works: a
// slow database must not let the lease run out under it.
func (s *Service) reconcileGrant(ctx context.Context, id int64) (*lock.Lock, error) {
	key := keys.Lock(s.cfg.KeyPrefix, id)
	// After Redis lost its data the fence counter starts again from zero;
	// raising it past the database's keeps every new grant newer than any
	// order already written.
	dbFence, err := s.orders.Fence(ctx, id)
	if err != nil {
		return nil, seckill.DatabaseDown(err)
	}
	if err := s.locks.SeedFence(ctx, key, dbFence); err != nil {
		return nil, seckill.Unavailable("Redis did not answer", err)
	}
	lk, err := s.locks.Obtain(ctx, key, s.cfg.LockTTL,
		&lock.ObtainOptions{Wait: 2*s.cfg.LockTTL + s.cfg.LockWait, MaxBackoff: lockPoll, AutoRenew: true})
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		return nil, seckill.Busy("purchases kept the activity's lock busy; try again", err)
	case err != nil:
		return nil, seckill.Unavailable("Redis did not answer", err)
	}
	return lk, nil
}

// loadHeld loads the activity's stock as remaining units under grant lk, and
// sets the sold-out mark (unless cleared since epoch) and the gauge to match.
// The load is checked against the lock in the same step: one that reaches
// Redis after the lease ended must not overwrite a newer holder's deducts.
func (s *Service) loadHeld(lease context.Context, lk *lock.Lock, activityID, remaining int64, epoch uint64) error {
	if err := s.stock.LoadIfHeld(lease, activityID, remaining, lk.Fence(), lk.Value()); err != nil {
		return err
	}
	if remaining > 0 {
		s.soldOut.clear(activityID)
	} else {
		s.markSoldOut(activityID, 0, epoch)
	}
	s.m.remaining.WithLabelValues(itoa(activityID)).Set(float64(remaining))
	return nil
}
