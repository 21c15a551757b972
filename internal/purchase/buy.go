package purchase

import (
	"context"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/tracing"
)

// Buy sells the units the request asks for (one by default, at most the
// activity's per-user limit, all or none) to the user. It returns the order, or an
// *seckill.Error with the contract's code. Whatever it returns, it never leaves
// a unit deducted without its order unless it could not learn whether the
// order was written; such a unit shows up in the audit and Reconcile returns it.
//
// The answer comes within about 2*LockWait + LockTTL + a few seconds of
// detached clean-up: LockWait in the queue (then 429 busy), LockWait for a
// lock another process holds, and the batch itself, bounded by its lease.
func (s *Service) Buy(ctx context.Context, req seckill.BuyRequest) (seckill.Order, error) {
	if req.ActivityID <= 0 {
		return seckill.Order{}, seckill.Errorf(seckill.EInvalid, "activity id must be a positive integer")
	}
	if req.UserID <= 0 {
		return seckill.Order{}, seckill.Errorf(seckill.EUnauthenticated, "user id must be a positive integer")
	}
	a, err := s.catalog.Visible(ctx, req.ActivityID)
	if err != nil {
		return seckill.Order{}, err
	}
	if req.Quantity < 0 || req.Units() > a.Limit() {
		return seckill.Order{}, seckill.Errorf(seckill.EInvalid, "quantity must be an integer from 1 to %d, this activity's per_user_limit", a.Limit())
	}
	for {
		if o, err, done := s.answerUnqueued(ctx, a, req); done {
			return o, err
		}
		// One purchase per buyer in flight, so one user's burst holds one
		// queue slot: a user's concurrent repeats wait for it without a
		// slot, then are answered as a repeat after it would be.
		f, done, leader := s.inflight.join(buyer{a.ID, req.UserID}, req)
		if leader {
			return s.leadFlight(ctx, f, a, req)
		}
		select {
		case <-done:
			s.inflight.waited()
		case <-ctx.Done():
			s.inflight.waited()
			return seckill.Order{}, seckill.Unavailable("the request ended while the same user's purchase of this activity was in flight; nothing was sold by this request", ctx.Err())
		}
		if o, err, ok := f.answerFor(req); ok {
			return o, err
		}
	}
}

// answerBought answers a buyer this process saw buy in the activity from
// the order it holds, read by user (its status is the answer's): the order
// again for a repeat of its idempotency key, already_purchased otherwise. It
// makes no look-up by key. ok is false when the database holds no order of
// the user after all; the buyer then goes the usual way.
func (s *Service) answerBought(ctx context.Context, activityID int64, req seckill.BuyRequest) (o seckill.Order, err error, ok bool) {
	held, err := s.orders.Orders.OrdersByUsers(ctx, activityID, []int64{req.UserID})
	if err != nil {
		if req.IdempotencyKey != "" {
			// The key's order cannot be replayed without the database.
			return seckill.Order{}, seckill.DatabaseDown(err), true
		}
		id, _ := s.bought.orderOf(activityID, req.UserID)
		return seckill.Order{}, seckill.AlreadyPurchased(seckill.Order{ID: id, ActivityID: activityID, UserID: req.UserID}), true
	}
	mine, ok := held[req.UserID]
	if !ok {
		return seckill.Order{}, nil, false
	}
	o, err = req.AnswerHolder(mine)
	return o, err, true
}

// leadFlight runs the buyer's purchase in flight and gives its outcome to
// the requests waiting for it; should the purchase panic, they go on by
// themselves rather than wait for their contexts to end.
func (s *Service) leadFlight(ctx context.Context, f *flight, a seckill.Activity, req seckill.BuyRequest) (o seckill.Order, err error) {
	finished := false
	defer func() {
		if !finished { // a panic unwinds through here; the error is built only then
			o, err = seckill.Order{}, seckill.Errorf(seckill.EInternal, "the purchase in flight did not finish")
		}
		s.inflight.leave(f, o, err, ctx.Err() != nil)
	}()
	o, err = s.queueAndAwait(ctx, a, f)
	finished = true
	if err != nil {
		s.seenAfterRetry(ctx, a, req.UserID, err)
	}
	return o, err
}

// queueAndAwait queues the flight's buyer, with the flight's ticket, and
// waits for its batch's answer.
func (s *Service) queueAndAwait(ctx context.Context, a seckill.Activity, f *flight) (seckill.Order, error) {
	s.tickets.Add(1)
	defer s.tickets.Add(-1)
	t := &f.ticket
	t.init(f.req)
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
	timer := waitTimer(s.cfg.Lease.Wait)
	defer putWaitTimer(timer)
	select {
	case <-t.done:
		return t.out.order, t.out.err
	case <-timer.C:
		if t.abandon() {
			s.m.abandoned.WithLabelValues("wait").Inc()
			if e := t.q.failing.Load(); e != nil {
				return seckill.Order{}, e
			}
			return seckill.Order{}, seckill.Busy("the activity is too busy: no batch took this purchase within the queue wait; nothing was sold", nil)
		}
	case <-ctx.Done():
		if t.abandon() {
			s.m.abandoned.WithLabelValues("cancelled").Inc()
			return seckill.Order{}, seckill.Unavailable("the request ended before its purchase started; nothing was sold", ctx.Err())
		}
	}
	<-t.done
	return t.out.order, t.out.err
}

// waitTimers keeps await's timers for the next buyers: one a purchase was
// three allocations and a timer made anew. A stopped timer delivers nothing
// late (Go 1.23 timers), so a reused one never fires for a wait before it.
var waitTimers = sync.Pool{New: func() any {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return t
}}

// waitTimer is a timer from waitTimers that fires after d.
func waitTimer(d time.Duration) *time.Timer {
	t := waitTimers.Get().(*time.Timer)
	t.Reset(d)
	return t
}

// putWaitTimer stops t and gives it back to waitTimers.
func putWaitTimer(t *time.Timer) {
	t.Stop()
	waitTimers.Put(t)
}

// replay is the answer to req from the order o its idempotency key was
// first used for: o, unless the key was used for another activity.
func replay(o seckill.Order, req seckill.BuyRequest) (seckill.Order, error) {
	if o.ActivityID != req.ActivityID {
		return seckill.Order{}, seckill.Errorf(seckill.EInvalid, "this Idempotency-Key was already used for activity %d", o.ActivityID)
	}
	return o, nil
}

// MyOrder returns the user's order for the activity.
func (s *Service) MyOrder(ctx context.Context, activityID, userID int64) (seckill.Order, error) {
	if _, err := s.catalog.Visible(ctx, activityID); err != nil {
		return seckill.Order{}, err
	}
	return s.orders.Orders.HeldOrder(ctx, activityID, userID)
}
