package purchase

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
)

// A batch of an activity with a waiting room whose COMMIT had an unknown
// outcome (503 outcome_unknown) leaves its units deducted and its buyers'
// admissions open: a 503 is not final. Were a buyer's retry sold to like
// any other, one admission would hold two deducted units until the books
// sweep gave the first back, and the room, which counts one unit per open
// admission, would let another admitted buyer hear sold_out. So such a
// batch is written down in Redis (stock.Unknowns, shared by every instance
// the buyer may retry on), and an admitted buyer's next purchase first
// resolves it with the resolver of a failed COMMIT (resolve): units back
// when nothing committed, each order answered when it did. While the
// database still cannot tell, the retry is told outcome_unknown again and
// takes no unit.

// rememberUnknown writes down the batch of grant g, whose outcome could not
// be learned, for its buyers' retries to resolve. Without a room there is
// no admission to keep to one unit, and nothing is written. When Redis does
// not take it, the units wait for the books sweep.
func (p *seller) rememberUnknown(a seckill.Activity, g stock.Grant, d deducted) {
	if !hasRoom(p.rooms, a) || len(d.orders) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), lookupTimeout)
	defer cancel()
	remaining := d.remaining
	if err := p.unknowns.Remember(ctx, a.ID, stock.UnknownBatch{Grant: g, Orders: d.orders, Remaining: &remaining}); err != nil {
		p.log.Warn("batch of unknown outcome not written down; a retry may take a second unit until the books sweep", "activity_id", a.ID, "fence", g.Fence, "err", err)
	}
}

// resolveEarlier resolves, before an admitted buyer's purchase, a batch of
// the buyer's whose outcome was unknown (rememberUnknown). It returns nil
// when the buyer may go on: no such batch, or it was resolved (its units
// that no order holds given back; an order it wrote is then the holder's
// answer further on). Otherwise the error to answer, and the buyer takes no
// unit.
func (p *seller) resolveEarlier(ctx context.Context, a seckill.Activity, userID int64) error {
	ub, found, err := p.unknowns.Of(ctx, a.ID, userID)
	switch {
	case errors.Is(err, stock.ErrUnknownStale):
		// Its batch expired with its receipt: the sweep has repaired the
		// stock, and the buyer goes on.
		p.log.Warn("stale name of a batch of unknown outcome not removed; the next purchase removes it", "activity_id", a.ID, "user_id", userID, "err", err)
		return nil
	case errors.Is(err, stock.ErrUnknownUnreadable):
		e := seckill.Errorf(seckill.EInternal, "%v", err)
		e.Err = err
		return e
	case err != nil:
		return seckill.Unavailable("Redis did not answer; nothing was sold", err)
	case !found:
		return nil
	}
	// Without the deduct's remaining the excess Redis had over the database
	// is not known: every unit of an order the database refused stays
	// deducted, for the books sweep to repair.
	d := deducted{orders: ub.Orders, remaining: math.MaxInt64 / 2, epoch: p.soldOut.epoch(a.ID)}
	if ub.Remaining != nil {
		d.remaining = *ub.Remaining
	}
	outs, st := p.resolve(ctx, a, ub.Grant, d, fmt.Errorf("an earlier purchase's outcome was unknown: %w", errOutcomeUnknownEarlier))
	p.settle(ctx, a, ub.Grant, d, st)
	for k, o := range ub.Orders {
		if e, ok := errors.AsType[*seckill.Error](outs[k].err); ok && o.UserID == userID && e.Code == seckill.EOutcomeUnknown {
			return e // settle wrote it down again
		}
	}
	if err := p.unknowns.Forget(ctx, a.ID, ub); err != nil {
		p.log.Warn("resolved batch of unknown outcome not removed; the next purchase of its buyers resolves it again", "activity_id", a.ID, "fence", ub.Grant.Fence, "err", err)
	}
	return nil
}

// errOutcomeUnknownEarlier is the cause of a batch resolved again.
var errOutcomeUnknownEarlier = errors.New("purchase: earlier batch of unknown outcome")
