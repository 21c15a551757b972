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

// deductApproved deducts the approved buyers' units in one step under the
// grant's fence and builds their orders. It reports whether any unit was
// taken: every buyer left without one has been answered.
func (s *sale) deductApproved() bool {
	s.epoch = s.soldOut.epoch(s.b.activity.ID)
	start := time.Now()
	ok := s.deduct()
	s.m.timeStep(stepDeduct, start)
	if !ok {
		return false
	}
	crashpoint.Hit(crashpoint.AfterDeduct)
	s.placed = s.newOrders()
	return true
}

// unitsOf is the units the orders hold.
func unitsOf(orders ...[]seckill.Order) int64 {
	var n int64
	for _, os := range orders {
		for _, o := range os {
			n += o.Units()
		}
	}
	return n
}

// tooFew is the answer to a buyer who asked for more units than the
// remaining left: sold_out when none is left, else not_enough_stock.
func tooFew(remaining int64) *seckill.Error {
	if remaining <= 0 {
		return soldOut()
	}
	return seckill.NotEnoughStock(remaining)
}

// write writes the deducted buyers' orders in one transaction, and settles
// the units of orders not written.
func (s *sale) write() {
	taken := unitsOf(s.placed)
	start := time.Now()
	w, err := s.writes.CreateOrders(s.lease, s.b.activity.ID, s.g.Fence, s.placed)
	s.m.timeStep(stepWrite, start)
	if err != nil {
		s.m.batches.WithLabelValues("write_failed").Inc()
		s.afterFailedWrite(err)
		return
	}
	crashpoint.Hit(crashpoint.AfterCommit)
	s.m.batches.WithLabelValues("written").Inc()
	s.answerWritten(w)
	over := unitsOf(w.Over)
	if keep := unitsOf(w.Written) + s.excessOver(over, w.Left); keep < taken {
		s.settle(keep, taken-keep, "already_ordered")
	}
}

// excessOver is how many of the over units (those of orders the database
// refused for want of units, its left being dbLeft after the claim) stay
// deducted: the excess Redis had over the database, which keeping deducted
// moves Redis to the truth. The rest go back at once; they are units the
// database still has, which a smaller order may buy. Before this grant's
// deduct Redis held s.remaining+taken units and the database dbLeft plus
// what this grant wrote or a unique key kept out, so the excess is
// s.remaining + over - dbLeft.
func (s *sale) excessOver(over, dbLeft int64) int64 {
	return min(max(s.remaining+over-dbLeft, 0), over)
}

// deduct takes the approved buyers' units from Redis in one step, and waits
// for the replicas when configured. Buyers the activity's waiting room has
// not admitted (their admission lapsed while they queued) are told
// not_admitted and the rest deduct again. Each buyer gets all the units
// asked for or none: it leaves in s.approved the buyers served and tells
// the others sold_out or not_enough_stock. On false every approved buyer
// has been failed and whatever the deduct may have taken is being given
// back.
func (s *sale) deduct() bool {
	b, a, lease, g := s.b, s.b.activity.ID, s.lease, s.g
	served, taken, remaining, err := s.deductAdmitted()
	approved := s.approved
	switch {
	case len(approved) == 0:
		return false
	case errors.Is(err, stock.ErrNotAdmitted):
		b.fail(approved, notAdmitted())
		return false
	case errors.Is(err, stock.ErrInFlight):
		b.fail(approved, inFlightElsewhere())
		return false
	case errors.Is(err, stock.ErrPaused), errors.Is(err, stock.ErrEnded):
		s.stoppedByOps(errors.Is(err, stock.ErrEnded))
		return false
	case errors.Is(err, stock.ErrSoldOut):
		if remaining == 0 {
			s.markSoldOut(a, 0, s.epoch)
		}
		s.m.batches.WithLabelValues("sold_out").Inc()
		b.fail(approved, tooFew(remaining))
		return false
	case errors.Is(err, stock.ErrNotLoaded):
		s.m.batches.WithLabelValues("unavailable").Inc()
		b.fail(approved, seckill.Unavailable("the activity's stock is not loaded; an operator must preload it", err))
		return false
	case err != nil:
		// A deduct whose reply was lost may have landed: settling at 0
		// gives its units back if it did, and stops it if it lands later.
		s.settle(0, b.unitsOf(approved), "deduct_failed")
		s.m.batches.WithLabelValues("unavailable").Inc()
		b.fail(approved, seckill.Unavailable("the stock store did not answer; nothing was sold", err))
		return false
	}
	if e := s.replicated(lease, "deduct", func(ctx context.Context) error {
		return s.stock.WaitDeduct(ctx, a, g, s.cfg.WaitReplicas, s.cfg.WaitTimeout)
	}); e != nil {
		// Not sold: its units go back where the deduct still is, and a
		// tombstone stops it where it is not.
		s.settle(0, taken, "unreplicated")
		b.fail(approved, e)
		return false
	}
	s.m.remaining.WithLabelValues(itoa(a)).Set(float64(remaining))
	s.markSoldOut(a, remaining, s.epoch)
	s.remaining = remaining
	s.approved = s.keepServed(served, remaining)
	return true
}

// keepServed tells the approved buyers the deduct did not serve that too
// few units were left, and returns those it served (served: indexes into
// s.approved).
func (s *sale) keepServed(served []int, remaining int64) []int {
	if len(served) == len(s.approved) {
		return s.approved
	}
	kept := make([]int, 0, len(served))
	next := 0
	for k, i := range s.approved {
		if next < len(served) && served[next] == k {
			kept = append(kept, i)
			next++
			continue
		}
		s.b.outs[i].err = tooFew(remaining)
	}
	return kept
}

// deductAdmitted runs the deduct for the approved buyers. A room's
// refusals of some of them (not admitted, a purchase of theirs in flight
// elsewhere) took nothing and wrote no receipt: those are answered and the
// grant deducts anew for the others, each kind of refusal once. It returns
// with s.approved empty when no buyer is left.
func (s *sale) deductAdmitted() (served []int, taken, remaining int64, err error) {
	b, a, lease, g := s.b, s.b.activity.ID, s.lease, s.g
	served, taken, remaining, err = s.stock.DeductEach(lease, a, g, b.users(s.approved), b.units(s.approved))
	for range 2 {
		if refused, isRefusal := errors.AsType[*stock.NotAdmittedError](err); isRefusal {
			s.failSome(refused.Buyers, "not_admitted", notAdmitted())
		} else if refused, isRefusal := errors.AsType[*stock.InFlightError](err); isRefusal {
			s.failSome(refused.Buyers, "in_flight", inFlightElsewhere())
		} else {
			break
		}
		if len(s.approved) == 0 {
			return nil, 0, 0, err
		}
		served, taken, remaining, err = s.stock.DeductEach(lease, a, g, b.users(s.approved), b.units(s.approved))
	}
	return served, taken, remaining, err
}

// inFlightElsewhere is the answer to an admitted buyer whose purchase
// another instance is making at the same moment: not final, the retry gets
// that purchase's outcome (already_purchased, or a deduct of its own once
// that one's units went back).
func inFlightElsewhere() *seckill.Error {
	return seckill.Busy("another purchase of yours for this activity is in flight; nothing more was taken: ask again in a moment", stock.ErrInFlight)
}

// failSome tells the buyers at refused (indexes into s.approved) err,
// counted as a batch outcome of kind, and keeps the others.
func (s *sale) failSome(refused []int, kind string, err error) {
	out := make(map[int]bool, len(refused))
	for _, k := range refused {
		out[k] = true
	}
	var rest, gone []int
	for k, i := range s.approved {
		if out[k] {
			gone = append(gone, i)
		} else {
			rest = append(rest, i)
		}
	}
	s.m.batches.WithLabelValues(kind).Inc()
	s.b.fail(gone, err)
	s.approved = rest
}

// newOrders builds the orders of the approved buyers, under the grant's
// fence.
func (s *sale) newOrders() []seckill.Order {
	now, fence := s.now().UTC(), s.g.Fence
	orders := make([]seckill.Order, len(s.approved))
	for k, i := range s.approved {
		req := s.b.req(i)
		orders[k] = seckill.Order{
			ID:             newOrderID(),
			ActivityID:     s.b.activity.ID,
			UserID:         req.UserID,
			Status:         seckill.OrderStatusCreated,
			IdempotencyKey: req.IdempotencyKey,
			Quantity:       req.Units(),
			Fence:          fence,
			CreatedAt:      now,
		}
	}
	return orders
}

// answerWritten sets the outcomes of a committed write of the sale's
// orders: the written orders, sold_out for those the database had no unit
// for, and for those a unique key kept out, why.
func (s *sale) answerWritten(w order.Batch) {
	b, a := s.b, s.b.activity.ID
	at := make(map[string]int, len(s.placed))
	for k, o := range s.placed {
		at[o.ID] = s.approved[k]
	}
	for _, o := range w.Written {
		s.bought.remember(o)
		b.outs[at[o.ID]].order = o
	}
	for _, o := range w.Over {
		b.outs[at[o.ID]].err = tooFew(w.Left)
	}
	if len(w.Over) > 0 {
		// Redis had more units than the database (a failover lost a
		// deduct): write gives back only what the database still has.
		s.log.Warn("database refused units Redis had; Redis moves to the database's count", "activity_id", a,
			"orders", len(w.Over), "units", unitsOf(w.Over), "database_left", w.Left)
		if w.Left == 0 {
			s.markSoldOut(a, 0, s.epoch)
		}
	}
	if len(w.Taken) == 0 {
		return
	}
	reqs := make([]seckill.BuyRequest, len(w.Taken))
	for k, o := range w.Taken {
		reqs[k] = b.req(at[o.ID])
	}
	for k, out := range s.explainTaken(reqs) {
		b.outs[at[w.Taken[k].ID]] = out
	}
}

// explainTaken answers the buyers whose orders a unique key kept out, in
// order: each already holds an order of the activity (a repeat with the same
// idempotency key gets that order again), or used the idempotency key for
// another order. One query finds the holders; only a buyer who holds none (a
// key used elsewhere, rare) costs one more.
func (s *sale) explainTaken(reqs []seckill.BuyRequest) []outcome {
	outs, none, err := s.keptOutAfter(reqs)
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
func (s *sale) keptOutAfter(reqs []seckill.BuyRequest) (outs []outcome, none []bool, err error) {
	err = lock.RetryDetached(s.lease, func(dctx context.Context) (err error) {
		outs, none, err = s.keptOut(dctx, reqs)
		return retry.RetryableError(err)
	})
	return outs, none, err
}

// keptOut learns why the orders of reqs were not written though their
// batch's transaction committed: each buyer holds an order of the activity
// (already_purchased, or that order again for a repeat of its idempotency
// key), used the key for another order (the replay's answer), or neither
// (none[k]: the database had no unit for it).
func (s *sale) keptOut(ctx context.Context, reqs []seckill.BuyRequest) (outs []outcome, none []bool, err error) {
	activityID := s.b.activity.ID
	outs, none = make([]outcome, len(reqs)), make([]bool, len(reqs))
	users := make([]int64, len(reqs))
	for k, r := range reqs {
		users[k] = r.UserID
	}
	held, err := s.orders.Orders.OrdersByUsers(ctx, activityID, users)
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
