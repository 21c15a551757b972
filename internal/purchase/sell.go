package purchase

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/crashpoint"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
)

// deducted is what a batch's deduct hands on to its write: the orders of
// the buyers it took units for (one each, in the order of the buyers that
// go on), what Redis held right after it, and the sold-out epoch read
// before it.
type deducted struct {
	orders    []seckill.Order
	remaining int64
	epoch     uint64
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

// deduct takes the buyers' units from Redis in one step under the grant's
// fence, waits for the replicas when configured, and builds the orders of
// the buyers it served, who go on. Each buyer gets all the units asked for
// or none: the others are told sold_out or not_enough_stock, or why the
// deduct refused them. When none goes on, whatever the deduct may have
// taken is being given back.
func (p *seller) deduct(g grant, b *batch, in []int) (deducted, []int, []answer) {
	a := b.activity.ID
	d := deducted{epoch: p.soldOut.epoch(a)}
	start := time.Now()
	in, said, served, taken, remaining, err := p.deductAdmitted(g, b, in)
	defer p.m.timeStep(stepDeduct, start)
	switch {
	case len(in) == 0:
		return d, nil, said
	case errors.Is(err, stock.ErrNotAdmitted):
		return d, nil, append(said, failAll(in, notAdmitted())...)
	case errors.Is(err, stock.ErrInFlight):
		return d, nil, append(said, failAll(in, inFlightElsewhere())...)
	case errors.Is(err, stock.ErrPaused), errors.Is(err, stock.ErrEnded):
		return d, nil, append(said, failAll(in, p.stoppedByOps(b.activity, errors.Is(err, stock.ErrEnded)))...)
	case errors.Is(err, stock.ErrSoldOut):
		if remaining == 0 {
			p.soldOut.markNone(a, 0, p.now(), d.epoch)
		}
		p.m.batches.WithLabelValues("sold_out").Inc()
		return d, nil, append(said, failAll(in, tooFew(remaining))...)
	case errors.Is(err, stock.ErrNotLoaded):
		p.m.batches.WithLabelValues("unavailable").Inc()
		return d, nil, append(said, failAll(in, seckill.Unavailable("the activity's stock is not loaded; an operator must preload it", err))...)
	case err != nil:
		// A deduct whose reply was lost may have landed: settling at 0
		// gives its units back if it did, and stops it if it lands later.
		p.giveBack(g.lease, a, g.stock, 0, b.unitsOf(in), "deduct_failed")
		p.m.batches.WithLabelValues("unavailable").Inc()
		return d, nil, append(said, failAll(in, seckill.Unavailable("the stock store did not answer; nothing was sold", err))...)
	}
	if e := p.replicated(g.lease, "deduct", func(ctx context.Context) error {
		return p.stock.WaitDeduct(ctx, a, g.stock, p.cfg.WaitReplicas, p.cfg.WaitTimeout)
	}); e != nil {
		// Not sold: its units go back where the deduct still is, and a
		// tombstone stops it where it is not.
		p.giveBack(g.lease, a, g.stock, 0, taken, "unreplicated")
		return d, nil, append(said, failAll(in, e)...)
	}
	p.m.remaining.WithLabelValues(itoa(a)).Set(float64(remaining))
	p.soldOut.markNone(a, remaining, p.now(), d.epoch)
	d.remaining = remaining
	in, tooFewSaid := keepServed(in, served, remaining)
	crashpoint.Hit(crashpoint.AfterDeduct)
	d.orders = newOrders(b, in, g.stock.Fence, p.now().UTC())
	return d, in, append(said, tooFewSaid...)
}

// keepServed tells the buyers in that the deduct did not serve that too few
// units were left, and returns those it served (served: indexes into in).
func keepServed(in, served []int, remaining int64) (kept []int, said []answer) {
	if len(served) == len(in) {
		return in, nil
	}
	kept = make([]int, 0, len(served))
	next := 0
	for k, i := range in {
		if next < len(served) && served[next] == k {
			kept = append(kept, i)
			next++
			continue
		}
		said = append(said, answer{i, outcome{err: tooFew(remaining)}})
	}
	return kept, said
}

// deductAdmitted runs the deduct for the buyers in. A room's refusals of
// some of them (not admitted, a purchase of theirs in flight elsewhere) took
// nothing and wrote no receipt: those are answered and the grant deducts
// anew for the others, each kind of refusal once. It returns the buyers the
// last deduct ran for (none when no buyer is left), with the answers given.
func (p *seller) deductAdmitted(g grant, b *batch, in []int) (left []int, said []answer, served []int, taken, remaining int64, err error) {
	a := b.activity.ID
	served, taken, remaining, err = p.stock.DeductEach(g.lease, a, g.stock, b.users(in), b.units(in))
	for range 2 {
		var gone []int
		if refused, isRefusal := errors.AsType[*stock.NotAdmittedError](err); isRefusal {
			in, gone = split(in, refused.Buyers)
			p.m.batches.WithLabelValues("not_admitted").Inc()
			said = append(said, failAll(gone, notAdmitted())...)
		} else if refused, isRefusal := errors.AsType[*stock.InFlightError](err); isRefusal {
			in, gone = split(in, refused.Buyers)
			p.m.batches.WithLabelValues("in_flight").Inc()
			said = append(said, failAll(gone, inFlightElsewhere())...)
		} else {
			break
		}
		if len(in) == 0 {
			return nil, said, nil, 0, 0, err
		}
		served, taken, remaining, err = p.stock.DeductEach(g.lease, a, g.stock, b.users(in), b.units(in))
	}
	return in, said, served, taken, remaining, err
}

// split parts in into the buyers not refused and those refused (refused:
// indexes into in).
func split(in, refused []int) (rest, gone []int) {
	out := make(map[int]bool, len(refused))
	for _, k := range refused {
		out[k] = true
	}
	for k, i := range in {
		if out[k] {
			gone = append(gone, i)
		} else {
			rest = append(rest, i)
		}
	}
	return rest, gone
}

// inFlightElsewhere is the answer to an admitted buyer whose purchase
// another instance is making at the same moment: not final, the retry gets
// that purchase's outcome (already_purchased, or a deduct of its own once
// that one's units went back).
func inFlightElsewhere() *seckill.Error {
	return seckill.Busy("another purchase of yours for this activity is in flight; nothing more was taken: ask again in a moment", stock.ErrInFlight)
}

// newOrders builds the orders of the buyers in, under the grant's fence.
func newOrders(b *batch, in []int, fence int64, now time.Time) []seckill.Order {
	orders := make([]seckill.Order, len(in))
	for k, i := range in {
		req := b.req(i)
		orders[k] = seckill.Order{
			ID:             newOrderID(),
			ActivityID:     b.activity.ID,
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

// write writes the deducted buyers' orders (the buyers in) in one
// transaction and answers each of them; the settlement says which units
// then go back.
func (p *seller) write(g grant, a seckill.Activity, in []int, d deducted) ([]answer, settlement) {
	start := time.Now()
	w, err := p.writes.CreateOrders(g.lease, a.ID, g.stock.Fence, d.orders)
	p.m.timeStep(stepWrite, start)
	if err != nil {
		p.m.batches.WithLabelValues("write_failed").Inc()
		outs, st := p.afterFailedWrite(g, a, d, err)
		return answersAt(in, outs), st
	}
	crashpoint.Hit(crashpoint.AfterCommit)
	p.m.batches.WithLabelValues("written").Inc()
	said := p.answerWritten(g.lease, a.ID, in, d, w)
	keep := unitsOf(w.Written) + excessOver(d.remaining, unitsOf(w.Over), w.Left)
	if keep < unitsOf(d.orders) {
		return said, settlement{keep: keep, why: "already_ordered"}
	}
	return said, settlement{}
}

// excessOver is how many of the over units (those of orders the database
// refused for want of units, its left being dbLeft after the claim) stay
// deducted: the excess Redis had over the database, which keeping deducted
// moves Redis to the truth. The rest go back at once; they are units the
// database still has, which a smaller order may buy. Before the grant's
// deduct Redis held remaining plus what it took, and the database dbLeft
// plus what the grant wrote or a unique key kept out, so the excess is
// remaining + over - dbLeft.
func excessOver(remaining, over, dbLeft int64) int64 {
	return min(max(remaining+over-dbLeft, 0), over)
}

// answerWritten answers the buyers in (one per order of d) after a
// committed write: the written orders, sold_out (or not_enough_stock) for
// those the database had no unit for, and for those a unique key kept out,
// why.
func (p *seller) answerWritten(lease context.Context, activityID int64, in []int, d deducted, w order.Batch) []answer {
	at := make(map[string]int, len(d.orders))
	for k, i := range in {
		at[d.orders[k].ID] = i
	}
	said := make([]answer, 0, len(d.orders))
	for _, o := range w.Written {
		p.bought.remember(o)
		said = append(said, answer{at[o.ID], outcome{order: o}})
	}
	for _, o := range w.Over {
		said = append(said, answer{at[o.ID], outcome{err: tooFew(w.Left)}})
	}
	if len(w.Over) > 0 {
		// Redis had more units than the database (a failover lost a
		// deduct): write gives back only what the database still has.
		p.log.Warn("database refused units Redis had; Redis moves to the database's count", "activity_id", activityID,
			"orders", len(w.Over), "units", unitsOf(w.Over), "database_left", w.Left)
		if w.Left == 0 {
			p.soldOut.markNone(activityID, 0, p.now(), d.epoch)
		}
	}
	if len(w.Taken) == 0 {
		return said
	}
	for k, out := range p.holders.explain(lease, activityID, w.Taken) {
		said = append(said, answer{at[w.Taken[k].ID], out})
	}
	return said
}
