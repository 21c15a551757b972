package purchase

import (
	"context"
	"errors"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/tracing"
)

// BuyRequest is one buyer's attempt to buy one unit.
type BuyRequest struct {
	ActivityID int64
	UserID     int64
	// IdempotencyKey, when not empty, makes a repeat by the same user return
	// the first request's order.
	IdempotencyKey string
}

// Buy sells one unit of the activity to the user. It returns the order, or an
// *seckill.Error with the contract's code. Whatever it returns, it never leaves
// a unit deducted without its order unless it could not learn whether the
// order was written; such a unit shows up in the audit and Reconcile returns it.
//
// The answer comes within about 2*LockWait + LockTTL + a few seconds of
// detached clean-up: LockWait in the queue (then 429 busy), LockWait for a
// lock another process holds, and the batch itself, bounded by its lease.
func (s *Service) Buy(ctx context.Context, req BuyRequest) (seckill.Order, error) {
	if naive != nil {
		return naive(ctx, s, req)
	}
	if req.ActivityID <= 0 {
		return seckill.Order{}, seckill.Errorf(seckill.EInvalid, "activity id must be a positive integer")
	}
	if req.UserID <= 0 {
		return seckill.Order{}, seckill.Errorf(seckill.EUnauthenticated, "user id must be a positive integer")
	}
	a, err := s.activity(ctx, req.ActivityID)
	if err != nil {
		return seckill.Order{}, err
	}
	now := s.now()
	if now.Before(a.StartsAt) {
		return seckill.Order{}, seckill.Errorf(seckill.ENotStarted, "the sale starts at %s", a.StartsAt.UTC().Format(time.RFC3339))
	}
	if !now.Before(a.EndsAt) {
		return seckill.Order{}, s.holderOr(ctx, a.ID, req.UserID, ended(a))
	}
	if req.IdempotencyKey != "" {
		o, err := s.orders.OrderByIdempotencyKey(ctx, req.UserID, req.IdempotencyKey)
		switch {
		case err == nil:
			return s.replay(o, req)
		case !errors.Is(err, order.ErrNotFound):
			return seckill.Order{}, unavailable("the order database did not answer", err)
		}
	}
	if _, ok := s.bought.Load(buyer{req.ActivityID, req.UserID}); ok || s.soldOutFresh(req.ActivityID) {
		return seckill.Order{}, s.holderOr(ctx, a.ID, req.UserID, soldOut())
	}

	t := newTicket(req)
	t.origin = tracing.OriginOf(ctx)
	if err := s.enqueue(a, t); err != nil {
		return seckill.Order{}, err
	}
	return s.await(ctx, t)
}

// await waits for the batch that takes t to answer it. A buyer not taken
// within LockWait, or whose request ends first, leaves the queue: with 429
// busy, or 503 when the batch ahead of it could not reach Redis. Once taken,
// it waits for the answer, which its batch's lease bounds.
func (s *Service) await(ctx context.Context, t *ticket) (seckill.Order, error) {
	timer := time.NewTimer(s.cfg.LockWait)
	defer timer.Stop()
	select {
	case out := <-t.done:
		return out.order, out.err
	case <-timer.C:
		if t.abandon() {
			s.m.abandoned.WithLabelValues("wait").Inc()
			if e := t.q.failing.Load(); e != nil {
				return seckill.Order{}, e
			}
			return seckill.Order{}, busy("the activity is too busy: no batch took this purchase within the queue wait; nothing was sold", nil)
		}
	case <-ctx.Done():
		if t.abandon() {
			s.m.abandoned.WithLabelValues("cancelled").Inc()
			return seckill.Order{}, unavailable("the request ended before its purchase started; nothing was sold", ctx.Err())
		}
	}
	out := <-t.done
	return out.order, out.err
}

func ended(a seckill.Activity) *seckill.Error {
	return seckill.Errorf(seckill.EEnded, "the sale ended at %s", a.EndsAt.UTC().Format(time.RFC3339))
}

func (s *Service) replay(o seckill.Order, req BuyRequest) (seckill.Order, error) {
	if o.ActivityID != req.ActivityID {
		return seckill.Order{}, seckill.Errorf(seckill.EInvalid, "this Idempotency-Key was already used for activity %d", o.ActivityID)
	}
	return o, nil
}

func (s *Service) remember(o seckill.Order) {
	if s.boughtCount.Load() >= boughtCap {
		return
	}
	if _, loaded := s.bought.LoadOrStore(buyer{o.ActivityID, o.UserID}, o.ID); !loaded {
		s.boughtCount.Add(1)
	}
}

// soldOutFresh reports whether the activity was seen sold out less than
// soldOutRecheck ago.
func (s *Service) soldOutFresh(activityID int64) bool {
	at, ok := s.soldOut.seen(activityID)
	return ok && s.now().Sub(at) < soldOutRecheck
}

// ClearSoldOut forgets the activity's sold-out mark: a unit went back to its
// stock outside the purchase path (an expired order), so it sells at once.
func (s *Service) ClearSoldOut(activityID int64) { s.soldOut.clear(activityID) }

// markSoldOut marks the activity sold out when remaining is none, unless a
// unit went back since epoch (soldOutMarks.epoch) was read.
func (s *Service) markSoldOut(activityID, remaining int64, epoch uint64) {
	if remaining <= 0 {
		s.soldOut.mark(activityID, s.now(), epoch)
	}
}
