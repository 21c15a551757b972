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

// settlement is what a batch's write leaves to settle: the units that stay
// deducted (keep) and why the rest go back ("" when none does).
type settlement struct {
	keep int64
	why  string
	// unknown: the write's outcome could not be learned; nothing goes back,
	// and the batch is written down for its buyers' retries.
	unknown bool
	// unknownIfKept: no order was written; should Redis not take the units
	// back, the batch is written down as one of unknown outcome, so that its
	// buyer's retry inside the same admission gives them back first
	// (resolveEarlier) instead of holding a second deduct (or being refused
	// as a purchase in flight).
	unknownIfKept bool
}

// afterFailedWrite answers the buyers of a batch whose order write failed
// after their units were deducted, one outcome per order of d, and says
// which units go back.
func (p *seller) afterFailedWrite(g grant, a seckill.Activity, d deducted, err error) ([]outcome, settlement) {
	switch {
	case errors.Is(err, order.ErrCommitUnknown):
		return p.resolve(g.lease, a, g.stock, d, err)
	case errors.Is(err, order.ErrStaleFence):
		p.reseedFence(g.lease, a.ID)
		return allOutcomes(len(d.orders), seckill.Unavailable("the batch's lease expired before its orders were written; nothing was sold", err)),
			settlement{why: "stale_fence", unknownIfKept: true}
	case errors.Is(err, order.ErrActivityNotFound):
		return allOutcomes(len(d.orders), seckill.NoActivity(a.ID)), settlement{why: "activity_missing", unknownIfKept: true}
	default:
		return allOutcomes(len(d.orders), seckill.Unavailable("the order database failed; nothing was sold", err)),
			settlement{why: "write_failed", unknownIfKept: true}
	}
}

// allOutcomes is n outcomes of err.
func allOutcomes(n int, err error) []outcome {
	outs := make([]outcome, n)
	for k := range outs {
		outs[k].err = err
	}
	return outs
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
func (p *seller) reseedFence(lease context.Context, activityID int64) {
	dctx, cancel := lock.Detached(lease)
	defer cancel()
	dbFence, err := p.orders.Activities.Fence(dctx, activityID)
	if err == nil {
		err = p.locks.SeedFence(dctx, p.stock.Keys().Lock(activityID), dbFence)
	}
	if err != nil {
		p.log.Warn("fence not reseeded after a stale grant; the next one reseeds it", "activity_id", activityID, "err", err)
		return
	}
	p.m.reseeded.Inc()
}

// resolve finds out which orders of a batch whose COMMIT had an unknown
// outcome exist, with a locking read that waits for a commit still in
// flight, and answers each order's buyer (one outcome per order of d). It
// serves a COMMIT that just failed and an earlier batch written down as of
// unknown outcome alike. Units go back only for orders known to be absent:
// returning one whose order did commit would sell it twice. When nothing
// can be learned, the units stay deducted for reconciliation.
func (p *seller) resolve(lease context.Context, a seckill.Activity, g stock.Grant, d deducted, cause error) ([]outcome, settlement) {
	n := unitsOf(d.orders)
	written, dbLeft, err := p.writtenOf(lease, a.ID, d.orders)
	if err != nil {
		p.m.leaked.Add(float64(n))
		p.log.Error("order commit outcome unknown; units held until the books are repaired",
			"activity_id", a.ID, "fence", g.Fence, "orders", len(d.orders), "units", n, "err", errors.Join(cause, err))
		return allOutcomes(len(d.orders), outcomeUnknown(errors.Join(cause, err))), settlement{unknown: true}
	}
	if len(written) == 0 {
		// The transaction did not commit: nothing was sold.
		return allOutcomes(len(d.orders), seckill.Unavailable("the order database failed; nothing was sold", cause)), settlement{why: "commit_failed"}
	}
	// It did commit: each order it left out was kept out by a unique key
	// (the buyer holds an order, or used the key elsewhere) or had no unit
	// left in the database, as in a batch whose COMMIT answered.
	outs, keep := p.answerCommitted(lease, a.ID, d, written, dbLeft, cause)
	return outs, settlement{keep: keep, why: "commit_failed"}
}

// answerCommitted answers the buyers of a batch whose COMMIT did land, one
// outcome per order of d, from the orders found written and the units the
// database had left then, and returns how many of its units stay deducted
// (units, not orders): the written orders', those of buyers whose reason
// was not learned, and of those the database had too few units for, the
// excess Redis had over it.
func (p *seller) answerCommitted(lease context.Context, activityID int64, d deducted, written map[string]seckill.Order, dbLeft int64, cause error) (outs []outcome, keep int64) {
	outs = make([]outcome, len(d.orders))
	for _, o := range written {
		keep += o.Units()
	}
	var (
		left   []int // indexes into d.orders
		absent []seckill.Order
	)
	for k, o := range d.orders {
		if w, ok := written[o.ID]; ok {
			p.bought.remember(w)
			outs[k].order = w
			continue
		}
		left = append(left, k)
		absent = append(absent, o)
	}
	explained, none, kerr := p.holders.keptOutAfter(lease, activityID, absent)
	var over, keptOut int64
	for n, k := range left {
		switch {
		case kerr != nil:
			// Not sold by this request, for a reason not learned: its unit
			// stays deducted until the books are repaired.
			outs[k].err = seckill.Unavailable("the order database failed; nothing was sold", errors.Join(cause, kerr))
			keep += d.orders[k].Units()
		case none[n]:
			// Over: the database had too few units for it.
			outs[k].err = tooFew(dbLeft)
			over += d.orders[k].Units()
		default:
			outs[k] = explained[n]
			keptOut += d.orders[k].Units()
		}
	}
	if over > 0 {
		// dbLeft already counts the units of the orders a unique key kept
		// out (the claim gave them back), which go back to Redis too.
		keep += excessOver(d.remaining, over, dbLeft-keptOut)
		if dbLeft == 0 {
			p.soldOut.markNone(activityID, 0, p.now(), d.epoch)
		}
	}
	return outs, keep
}

// writtenOf reads which of the orders exist, with the locking read that
// waits for a commit still in flight, asking up to three times.
func (p *seller) writtenOf(lease context.Context, activityID int64, orders []seckill.Order) (written map[string]seckill.Order, dbLeft int64, err error) {
	ids := make([]string, len(orders))
	for k, o := range orders {
		ids[k] = o.ID
	}
	err = lock.RetryDetached(lease, func(dctx context.Context) (err error) {
		written, dbLeft, err = p.orders.Orders.Written(dctx, activityID, ids)
		return retry.RetryableError(err)
	})
	return written, dbLeft, err
}

// settle carries out a batch's settlement: the units its orders do not
// hold go back, or the batch is written down as one of unknown outcome.
func (p *seller) settle(lease context.Context, a seckill.Activity, g stock.Grant, d deducted, st settlement) {
	switch {
	case st.unknown:
		p.rememberUnknown(a, g, d)
	case st.why != "":
		n := unitsOf(d.orders)
		if !p.giveBack(lease, a.ID, g, st.keep, n-st.keep, st.why) && st.unknownIfKept {
			p.rememberUnknown(a, g, d)
		}
	}
}

// giveBack gives back what the grant deducted beyond keep units: the units
// of orders not written. Settling is idempotent, so a Redis that does not
// answer is asked again; only when it never answers are the units (at most
// atStake) leaked to reconciliation, and giveBack reports false.
func (p *seller) giveBack(lease context.Context, activityID int64, g stock.Grant, keep, atStake int64, why string) bool {
	var remaining, returned int64
	err := lock.RetryDetached(lease, func(dctx context.Context) (err error) {
		remaining, returned, err = p.stock.Settle(dctx, activityID, g, keep)
		if err != nil && !errors.Is(err, stock.ErrNoDeduct) && !errors.Is(err, stock.ErrStale) && !errors.Is(err, stock.ErrNotLoaded) {
			return retry.RetryableError(err)
		}
		return err
	})
	switch {
	case err == nil:
		if returned > 0 {
			p.m.returned.WithLabelValues(why).Add(float64(returned))
			p.soldOut.clear(activityID)
			p.m.remaining.WithLabelValues(itoa(activityID)).Set(float64(remaining))
		}
		return true
	case errors.Is(err, stock.ErrNoDeduct):
		return true
	case errors.Is(err, stock.ErrStale), errors.Is(err, stock.ErrNotLoaded):
		p.log.Info("units not returned: the stock was reloaded since the deduct", "activity_id", activityID, "reason", why)
		return true
	}
	p.m.leaked.Add(float64(atStake))
	p.log.Error("units could not be returned; reconcile the activity", "activity_id", activityID, "fence", g.Fence, "keep", keep, "reason", why, "err", err)
	return false
}
