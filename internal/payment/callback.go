package payment

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
)

// A callback is a hint that anyone holding a signed one can replay, so the
// provider is asked at most once a second per order (the result page's
// gate, shared), and never for an order whose window closed long ago. But a
// genuine callback says the payment changed just now, so one is never
// answered from a query that began before it arrived, nor from one that
// failed: a callback that finds the order queried within the last second
// waits for that second to end, and the callbacks that waited together share
// the one query made then. Thus every callback is answered after a query
// that started after it arrived and whose answer was written, or 503, and 20
// callbacks within a second cost at most two queries.

// expiredLongAgo is how long after its pay_by an expired order stops being
// worth a provider query on a callback: a late payment is looked for within
// a day; an older callback is a replay, or the operator's to reconcile.
const expiredLongAgo = 24 * time.Hour

// Callback runs the verification of the order a provider's callback names
// and returns the order after it. The callback is only a hint: the provider
// is asked (see above for when it is not). Errors: EOrderNotFound,
// EUnavailable (the provider or a store did not answer, or another
// verification kept the order busy).
func (s *Service) Callback(ctx context.Context, orderID string) (seckill.Order, error) {
	o, err := s.orders.Orders.OrderByID(ctx, orderID)
	switch {
	case errors.Is(err, order.ErrNotFound):
		return seckill.Order{}, seckill.Errorf(seckill.EOrderNotFound, "no order %q", orderID)
	case err != nil:
		return seckill.Order{}, seckill.DatabaseDown(err)
	}
	if s.expiredLongAgo(o) {
		s.m.verified(triggerCallback, outcomeCoalesced)
		return o, nil
	}
	v, err := s.verifyCallback(ctx, o)
	if err != nil {
		return seckill.Order{}, seckill.Unavailable("the payment could not be verified now; the order is verified again later", err)
	}
	return v, nil
}

// expiredLongAgo reports whether o expired and its window closed more than
// expiredLongAgo ago.
func (s *Service) expiredLongAgo(o seckill.Order) bool {
	return o.Status == seckill.OrderStatusExpired && !o.PayBy.IsZero() && s.now().Sub(o.PayBy) > expiredLongAgo
}

// verifyCallback is a callback's verification: it returns the order after
// a provider query that started after the callback arrived, made by this
// callback or by another trigger.
func (s *Service) verifyCallback(ctx context.Context, o seckill.Order) (seckill.Order, error) {
	if !wants(o, triggerCallback) {
		s.m.verified(triggerCallback, outcomeSettled)
		return o, nil
	}
	arrived, err := s.counts.started(ctx, o)
	if err != nil {
		s.m.verified(triggerCallback, outcomeUnknown)
		return o, err
	}
	for {
		v, outcome, wait, err := s.callbackOnce(ctx, o, arrived)
		if wait <= 0 {
			s.m.verified(triggerCallback, outcome)
			return v, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			s.m.verified(triggerCallback, outcomeUnknown)
			return o, fmt.Errorf("payment: callback of order %s waited for the provider's next query: %w", o.ID, ctx.Err())
		case <-t.C:
		}
	}
}

// callbackOnce takes the order's lock and, under it: answers the order as
// it is when a query started after the callback arrived was answered (the
// answered number moved past arrived; a query counted but failed does not
// move it), asks to wait (wait > 0) when the order was queried less than a
// second ago, else queries. Such an answer found while waiting for the lock
// needs no lock (lockOrAnswered).
func (s *Service) callbackOnce(ctx context.Context, o seckill.Order, arrived int64) (_ seckill.Order, outcome string, wait time.Duration, _ error) {
	lk, answered, err := s.lockOrAnswered(ctx, o, arrived)
	switch {
	case errors.Is(err, lock.ErrNotObtained):
		return o, outcomeBusy, 0, fmt.Errorf("%w: order %s: %w", errBusy, o.ID, err)
	case err != nil:
		return o, outcomeUnknown, 0, err
	case answered:
		return s.coalesced(ctx, o)
	}
	defer func() {
		if err := lk.Release(ctx); err != nil {
			s.log.WarnContext(ctx, "payment: order lock release", "order_id", o.ID, "fence", lk.Fence(), "err", err)
		}
	}()
	lease := lk.Context()
	n, err := s.counts.answered(lease, o)
	if err != nil {
		return o, outcomeUnknown, 0, err
	}
	if n > arrived {
		return s.coalesced(lease, o)
	}
	first, err := s.redis.SetNX(lease, s.pollKey(o), 1, resultPageInterval).Result()
	if err != nil {
		return o, outcomeUnknown, 0, fmt.Errorf("payment: order %s: %w", o.ID, err)
	}
	if !first {
		left, err := s.redis.PTTL(lease, s.pollKey(o)).Result()
		if err != nil {
			return o, outcomeUnknown, 0, fmt.Errorf("payment: order %s: %w", o.ID, err)
		}
		// A key without a TTL (-1) or gone (-2) since the SETNX: try again soon.
		return o, "", max(left, 10*time.Millisecond), nil
	}
	v, outcome, err := s.verifyHolding(lk, o.ID, triggerCallback)
	return v, outcome, 0, err
}

// coalesced answers a callback with the order as a query started after it
// arrived left it.
func (s *Service) coalesced(ctx context.Context, o seckill.Order) (seckill.Order, string, time.Duration, error) {
	cur, err := s.orders.Orders.OrderByID(ctx, o.ID)
	if err != nil {
		return o, outcomeUnknown, 0, fmt.Errorf("payment: read order %s: %w", o.ID, err)
	}
	return cur, outcomeCoalesced, 0, nil
}

// callbackRecheck caps the pause between a waiting callback's looks for
// the holder's answer and attempts at the lock: they start 10 ms apart and
// double, so a burst of callbacks costs Redis about 20 commands a second
// each once it has waited a while.
const callbackRecheck = 100 * time.Millisecond

// lockOrAnswered waits for the order's lock and returns it, or returns
// answered when, meanwhile, a query started after the callback arrived was
// answered: its answer is written (markAnswered follows the write), so the
// callback reads the order without the lock. The wait follows the holder's
// verification, however long its lease is renewed, and ends with ctx (the
// handler bounds it): a fixed bound ended the wait of callbacks on a loaded
// machine while the holder was still writing the answer they waited for,
// and the callbacks that waited together then took the lock in turn to
// read one answer.
func (s *Service) lockOrAnswered(ctx context.Context, o seckill.Order, arrived int64) (_ *lock.Lock, answered bool, _ error) {
	for pause := 10 * time.Millisecond; ; pause = min(2*pause, callbackRecheck) {
		n, err := s.counts.answered(ctx, o)
		if err != nil {
			return nil, false, err
		}
		if n > arrived {
			return nil, true, nil
		}
		lk, err := s.locks.Obtain(ctx, s.lockKey(o), s.cfg.LockTTL, &lock.ObtainOptions{
			AutoRenew: true,
			FenceOf:   s.fenceLockKey(o.ActivityID),
		})
		switch {
		case err == nil:
			return lk, false, nil
		case !errors.Is(err, lock.ErrNotObtained):
			return nil, false, fmt.Errorf("payment: lock order %s: %w", o.ID, err)
		}
		t := time.NewTimer(pause/2 + rand.N(pause/2+1)) // jittered: the waiters of a burst spread out
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, false, fmt.Errorf("%w: %w", err, ctx.Err())
		case <-t.C:
		}
	}
}
