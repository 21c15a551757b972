package purchase

import (
	"context"
	"errors"

	"github.com/sethvargo/go-retry"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// afterFailedWrite decides, for a batch whose order write failed after the
// units of the buyers at approved were deducted, what each of them is told
// and which units go back.
func (s *sale) afterFailedWrite(err error) {
	a, n := s.b.activity.ID, unitsOf(s.placed)
	switch {
	case errors.Is(err, order.ErrCommitUnknown):
		s.resolveCommit(err)
	case errors.Is(err, order.ErrStaleFence):
		s.giveBackUnwritten(n, "stale_fence")
		s.reseedFence()
		s.b.fail(s.approved, seckill.Unavailable("the batch's lease expired before its orders were written; nothing was sold", err))
	case errors.Is(err, order.ErrActivityNotFound):
		s.giveBackUnwritten(n, "activity_missing")
		s.b.fail(s.approved, seckill.NoActivity(a))
	default:
		s.giveBackUnwritten(n, "write_failed")
		s.b.fail(s.approved, seckill.Unavailable("the order database failed; nothing was sold", err))
	}
}

// giveBackUnwritten gives back the n units of a batch that wrote no order.
// When Redis does not take them back, they stay deducted: the batch is
// written down as one of unknown outcome, so that its buyer's retry inside
// the same admission gives them back first (resolveEarlier) instead of
// holding a second deduct (or being refused as a purchase in flight).
func (s *sale) giveBackUnwritten(n int64, why string) {
	if !s.settle(0, n, why) {
		s.rememberUnknown()
	}
}

// reseedFence raises the activity's fence counter in Redis past the fence
// the database last accepted, after the database refused a grant's fence as
// stale. Most of the time the refused grant's lease had simply expired and a
// newer grant wrote first; then the counter is already past it and nothing
// changes. But after a Redis failover the promoted replica may have missed
// the last INCRs of the counter, and every new grant would get a fence the
// database has seen: without this, every purchase of the activity would be
// refused until an operator ran reconcile. The buyers of the refused batch
// are still told 503; the next batch goes through.
func (s *sale) reseedFence() {
	activityID := s.b.activity.ID
	dctx, cancel := lock.Detached(s.lease)
	defer cancel()
	dbFence, err := s.orders.Fence(dctx, activityID)
	if err == nil {
		err = s.locks.SeedFence(dctx, s.stock.Keys().Lock(activityID), dbFence)
	}
	if err != nil {
		s.log.Warn("fence not reseeded after a stale grant; the next one reseeds it", "activity_id", activityID, "err", err)
		return
	}
	s.m.reseeded.Inc()
}

// resolveCommit finds out which orders of a batch whose COMMIT failed exist,
// with a locking read that waits for a commit still in flight. Units go back
// only for orders known to be absent: returning one whose order did commit
// would sell it twice. When nothing can be learned, the units stay deducted
// for reconciliation.
func (s *sale) resolveCommit(cause error) {
	a, n := s.b.activity.ID, unitsOf(s.placed)
	written, dbLeft, err := s.writtenOf()
	if err != nil {
		s.m.leaked.Add(float64(n))
		s.log.Error("order commit outcome unknown; units held until the books are repaired",
			"activity_id", a, "fence", s.g.Fence, "orders", len(s.placed), "units", n, "err", errors.Join(cause, err))
		s.b.fail(s.approved, outcomeUnknown(errors.Join(cause, err)))
		s.rememberUnknown() // for a retry inside the admission (unknown.go)
		return
	}
	if len(written) == 0 {
		// The transaction did not commit: nothing was sold.
		s.b.fail(s.approved, seckill.Unavailable("the order database failed; nothing was sold", cause))
		s.settle(0, n, "commit_failed")
		return
	}
	// It did commit: each order it left out was kept out by a unique key
	// (the buyer holds an order, or used the key elsewhere) or had no unit
	// left in the database, as in a batch whose COMMIT answered.
	keep := s.answerCommitted(written, dbLeft, cause)
	s.settle(keep, n-keep, "commit_failed")
}

// answerCommitted sets the outcomes of a batch whose COMMIT did land, from
// the orders found written and the units the database had left then, and
// returns how many of its units stay deducted (units, not orders): the
// written orders', those of buyers whose reason was not learned, and of
// those the database had too few units for, the excess Redis had over it.
func (s *sale) answerCommitted(written map[string]seckill.Order, dbLeft int64, cause error) (keep int64) {
	b, approved, orders := s.b, s.approved, s.placed
	for _, o := range written {
		keep += o.Units()
	}
	var (
		left []int // indexes into orders
		reqs []seckill.BuyRequest
	)
	for k, i := range approved {
		if o, ok := written[orders[k].ID]; ok {
			s.bought.remember(o)
			b.outs[i].order = o
			continue
		}
		left = append(left, k)
		reqs = append(reqs, seckill.BuyRequest{ActivityID: b.activity.ID, UserID: orders[k].UserID, IdempotencyKey: orders[k].IdempotencyKey})
	}
	explained, none, kerr := s.keptOutAfter(reqs)
	var over, keptOut int64
	for n, k := range left {
		i := approved[k]
		switch {
		case kerr != nil:
			// Not sold by this request, for a reason not learned: its unit
			// stays deducted until the books are repaired.
			b.outs[i].err = seckill.Unavailable("the order database failed; nothing was sold", errors.Join(cause, kerr))
			keep += orders[k].Units()
		case none[n]:
			// Over: the database had too few units for it.
			b.outs[i].err = tooFew(dbLeft)
			over += orders[k].Units()
		default:
			b.outs[i] = explained[n]
			keptOut += orders[k].Units()
		}
	}
	if over > 0 {
		// dbLeft already counts the units of the orders a unique key kept
		// out (the claim gave them back), which go back to Redis too.
		keep += s.excessOver(over, dbLeft-keptOut)
		if dbLeft == 0 {
			s.markSoldOut(b.activity.ID, 0, s.epoch)
		}
	}
	return keep
}

// writtenOf reads which of the sale's orders exist, with the locking read
// that waits for a commit still in flight, asking up to three times.
func (s *sale) writtenOf() (written map[string]seckill.Order, dbLeft int64, err error) {
	ids := make([]string, len(s.placed))
	for k, o := range s.placed {
		ids[k] = o.ID
	}
	err = lock.RetryDetached(s.lease, func(dctx context.Context) (err error) {
		written, dbLeft, err = s.orders.Written(dctx, s.b.activity.ID, ids)
		return retry.RetryableError(err)
	})
	return written, dbLeft, err
}

// settle gives back what the grant deducted beyond keep units: the units of
// orders not written. Settling is idempotent, so a Redis that does not answer
// is asked again; only when it never answers are the units (at most atStake)
// leaked to reconciliation, and settle reports false.
func (s *sale) settle(keep, atStake int64, why string) bool {
	activityID, g := s.b.activity.ID, s.g
	var remaining, returned int64
	err := lock.RetryDetached(s.lease, func(dctx context.Context) (err error) {
		remaining, returned, err = s.stock.Settle(dctx, activityID, g, keep)
		if err != nil && !errors.Is(err, stock.ErrNoDeduct) && !errors.Is(err, stock.ErrStale) && !errors.Is(err, stock.ErrNotLoaded) {
			return retry.RetryableError(err)
		}
		return err
	})
	switch {
	case err == nil:
		if returned > 0 {
			s.m.returned.WithLabelValues(why).Add(float64(returned))
			s.soldOut.clear(activityID)
			s.m.remaining.WithLabelValues(itoa(activityID)).Set(float64(remaining))
		}
		return true
	case errors.Is(err, stock.ErrNoDeduct):
		return true
	case errors.Is(err, stock.ErrStale), errors.Is(err, stock.ErrNotLoaded):
		s.log.Info("units not returned: the stock was reloaded since the deduct", "activity_id", activityID, "reason", why)
		return true
	}
	s.m.leaked.Add(float64(atStake))
	s.log.Error("units could not be returned; reconcile the activity", "activity_id", activityID, "fence", g.Fence, "keep", keep, "reason", why, "err", err)
	return false
}
