package purchase

import (
	"context"
	"errors"
	"time"

	"github.com/sethvargo/go-retry"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/crashpoint"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// sell deducts the approved buyers' units in one step under the grant's
// fence, writes their orders in one transaction, and settles the units of
// orders not written.
func (s *Service) sell(lk *lock.Lock, b *batch, approved []int) {
	lease, g := lk.Context(), stock.Grant{Fence: lk.Fence(), Token: lk.Value()}
	epoch := s.soldOut.epoch(b.activity.ID)
	start := time.Now()
	approved, taken, ok := s.deduct(lease, b, g, approved, epoch)
	s.m.timeStep(stepDeduct, start)
	if !ok {
		return
	}
	crashpoint.Hit(crashpoint.AfterDeduct)
	b.fail(approved[taken:], soldOut())
	approved = approved[:taken]

	orders := s.newOrders(b, g.Fence, approved)
	start = time.Now()
	w, err := s.writes.CreateOrders(lease, b.activity.ID, g.Fence, orders)
	s.m.timeStep(stepWrite, start)
	if err != nil {
		s.m.batches.WithLabelValues("write_failed").Inc()
		s.afterFailedWrite(lease, b, g, approved, orders, err)
		return
	}
	crashpoint.Hit(crashpoint.AfterCommit)
	s.m.batches.WithLabelValues("written").Inc()
	s.answerWritten(lease, b, approved, orders, w, epoch)
	if keep := int64(len(w.Written) + len(w.Over)); keep < taken {
		s.settle(lease, b.activity.ID, g, keep, taken-keep, "already_ordered")
	}
}

// deduct takes the approved buyers' units from Redis in one step, and waits
// for the replicas when configured. Buyers the activity's waiting room has
// not admitted (their admission lapsed while they queued) are told
// not_admitted and the rest deduct again. It returns the buyers left and how
// many units it took, for the first that many of them; on false every
// approved buyer has been failed and whatever the deduct may have taken is
// being given back.
func (s *Service) deduct(lease context.Context, b *batch, g stock.Grant, approved []int, epoch uint64) (left []int, taken int64, ok bool) {
	a := b.activity.ID
	taken, remaining, err := s.stock.Deduct(lease, a, g, int64(len(approved)), b.users(approved)...)
	if refused, isRefusal := errors.AsType[*stock.NotAdmittedError](err); isRefusal {
		approved = s.failUnadmitted(b, approved, refused.Buyers)
		if len(approved) == 0 {
			return nil, 0, false
		}
		// Nothing was taken and no receipt written: the grant deducts anew.
		taken, remaining, err = s.stock.Deduct(lease, a, g, int64(len(approved)), b.users(approved)...)
		if errors.Is(err, stock.ErrNotAdmitted) {
			b.fail(approved, notAdmitted())
			return nil, 0, false
		}
	}
	switch {
	case errors.Is(err, stock.ErrSoldOut):
		s.markSoldOut(a, 0, epoch)
		s.m.batches.WithLabelValues("sold_out").Inc()
		b.fail(approved, soldOut())
		return nil, 0, false
	case errors.Is(err, stock.ErrNotLoaded):
		s.m.batches.WithLabelValues("unavailable").Inc()
		b.fail(approved, seckill.Unavailable("the activity's stock is not loaded; an operator must preload it", err))
		return nil, 0, false
	case err != nil:
		// A deduct whose reply was lost may have landed: settling at 0
		// gives its units back if it did, and stops it if it lands later.
		s.settle(lease, a, g, 0, int64(len(approved)), "deduct_failed")
		s.m.batches.WithLabelValues("unavailable").Inc()
		b.fail(approved, seckill.Unavailable("the stock store did not answer; nothing was sold", err))
		return nil, 0, false
	}
	if e := s.replicated(lease, "deduct", func(ctx context.Context) error {
		return s.stock.WaitDeduct(ctx, a, g, s.cfg.WaitReplicas, s.cfg.WaitTimeout)
	}); e != nil {
		// Not sold: its units go back where the deduct still is, and a
		// tombstone stops it where it is not.
		s.settle(lease, a, g, 0, taken, "unreplicated")
		b.fail(approved, e)
		return nil, 0, false
	}
	s.m.remaining.WithLabelValues(itoa(a)).Set(float64(remaining))
	s.markSoldOut(a, remaining, epoch)
	return approved, taken, true
}

// failUnadmitted tells the buyers at refused (indexes into approved)
// not_admitted and returns the others.
func (s *Service) failUnadmitted(b *batch, approved, refused []int) []int {
	out := make(map[int]bool, len(refused))
	for _, k := range refused {
		out[k] = true
	}
	var rest, gone []int
	for k, i := range approved {
		if out[k] {
			gone = append(gone, i)
		} else {
			rest = append(rest, i)
		}
	}
	s.m.batches.WithLabelValues("not_admitted").Inc()
	b.fail(gone, notAdmitted())
	return rest
}

// newOrders builds the orders of the buyers at idx, under fence.
func (s *Service) newOrders(b *batch, fence int64, idx []int) []seckill.Order {
	now := s.now().UTC()
	orders := make([]seckill.Order, len(idx))
	for k, i := range idx {
		req := b.req(i)
		orders[k] = seckill.Order{
			ID:             newOrderID(),
			ActivityID:     b.activity.ID,
			UserID:         req.UserID,
			Status:         seckill.OrderStatusCreated,
			IdempotencyKey: req.IdempotencyKey,
			Fence:          fence,
			CreatedAt:      now,
		}
	}
	return orders
}

// answerWritten sets the outcomes of a committed write of orders (one per
// buyer at approved): the written orders, sold_out for those the database
// had no unit for, and for those a unique key kept out, why.
func (s *Service) answerWritten(lease context.Context, b *batch, approved []int, orders []seckill.Order, w order.Batch, epoch uint64) {
	a := b.activity.ID
	at := make(map[string]int, len(orders))
	for k, o := range orders {
		at[o.ID] = approved[k]
	}
	for _, o := range w.Written {
		s.bought.remember(o)
		b.outs[at[o.ID]].order = o
	}
	for _, o := range w.Over {
		b.outs[at[o.ID]].err = soldOut()
	}
	if len(w.Over) > 0 {
		// The database holds every unit already: Redis had too many.
		// Keeping those units deducted moves Redis towards the truth.
		s.log.Warn("database refused units Redis had; reconcile the activity", "activity_id", a, "units", len(w.Over))
		s.markSoldOut(a, 0, epoch)
	}
	if len(w.Taken) == 0 {
		return
	}
	reqs := make([]seckill.BuyRequest, len(w.Taken))
	for k, o := range w.Taken {
		reqs[k] = b.req(at[o.ID])
	}
	for k, out := range s.explainTaken(lease, a, reqs) {
		b.outs[at[w.Taken[k].ID]] = out
	}
}

// explainTaken answers the buyers whose orders a unique key kept out, in
// order: each already holds an order of the activity (a repeat with the same
// idempotency key gets that order again), or used the idempotency key for
// another order. One query finds the holders; only a buyer who holds none (a
// key used elsewhere, rare) costs one more.
func (s *Service) explainTaken(lease context.Context, activityID int64, reqs []seckill.BuyRequest) []outcome {
	outs, none, err := s.keptOutAfter(lease, activityID, reqs)
	for k := range outs {
		if err != nil || none[k] {
			outs[k].err = seckill.Unavailable("the order database did not answer; nothing was sold", err)
		}
	}
	return outs
}

// keptOutAfter is keptOut after a batch's write, which may have ended late
// in the lease or after it (a COMMIT that landed late, a look-up that waited
// for it): it reads on detached contexts of its own, asking up to three
// times, since an answer from a context already over would tell buyers the
// database did not answer and give back units their orders may hold.
func (s *Service) keptOutAfter(ctx context.Context, activityID int64, reqs []seckill.BuyRequest) (outs []outcome, none []bool, err error) {
	err = lock.RetryDetached(ctx, func(dctx context.Context) (err error) {
		outs, none, err = s.keptOut(dctx, activityID, reqs)
		return retry.RetryableError(err)
	})
	return outs, none, err
}

// keptOut learns why the orders of reqs were not written though their
// batch's transaction committed: each buyer holds an order of the activity
// (already_purchased, or that order again for a repeat of its idempotency
// key), used the key for another order (the replay's answer), or neither
// (none[k]: the database had no unit for it).
func (s *Service) keptOut(ctx context.Context, activityID int64, reqs []seckill.BuyRequest) (outs []outcome, none []bool, err error) {
	outs, none = make([]outcome, len(reqs)), make([]bool, len(reqs))
	users := make([]int64, len(reqs))
	for k, r := range reqs {
		users[k] = r.UserID
	}
	held, err := s.orders.OrdersByUsers(ctx, activityID, users)
	if err != nil {
		return outs, none, err
	}
	for k, req := range reqs {
		if existing, ok := held[req.UserID]; ok {
			s.bought.remember(existing)
			if req.IdempotencyKey != "" && existing.IdempotencyKey == req.IdempotencyKey {
				outs[k].order = existing
			} else {
				outs[k].err = seckill.Holds(existing)
			}
			continue
		}
		if req.IdempotencyKey != "" {
			first, err := s.orderByKey(ctx, req.UserID, req.IdempotencyKey)
			switch {
			case err == nil:
				outs[k].order, outs[k].err = s.replay(first, req)
				continue
			case !errors.Is(err, order.ErrNotFound):
				return outs, none, err
			}
		}
		none[k] = true
	}
	return outs, none, nil
}
