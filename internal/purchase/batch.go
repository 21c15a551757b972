package purchase

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/crashpoint"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// lockPoll caps the pause between attempts on a lock another instance holds:
// its batch keeps it for milliseconds, so a long pause would leave the
// activity idle while this instance's buyers wait.
const lockPoll = 5 * time.Millisecond

// runBatch serves the tickets with one lock grant and answers each of them.
// A buyer who queued twice in one batch is served once: the repeat gets the
// first request's outcome when it carries the same idempotency key, and
// otherwise already_purchased when the first bought, or the first's error.
func (s *Service) runBatch(q *queue, tickets []*ticket) {
	s.m.batchSize.Observe(float64(len(tickets)))
	firsts, repeats := byUser(tickets)
	outs := s.serve(q, firsts)
	s.preferHolders(q.activity.ID, firsts, outs)
	for i, t := range firsts {
		t.answer(outs[i].order, outs[i].err)
	}
	for _, r := range repeats {
		first, out := firsts[r.first], outs[r.first]
		switch {
		case r.t.req.IdempotencyKey != "" && r.t.req.IdempotencyKey == first.req.IdempotencyKey:
			r.t.answer(out.order, out.err)
		case out.err == nil:
			r.t.answer(seckill.Order{}, holds(out.order))
		default:
			r.t.answer(seckill.Order{}, out.err)
		}
	}
}

type repeat struct {
	t     *ticket
	first int // index of the same user's first ticket
}

// byUser splits the tickets into each user's first and the repeats.
func byUser(tickets []*ticket) (firsts []*ticket, repeats []repeat) {
	seen := make(map[int64]int, len(tickets))
	for _, t := range tickets {
		if i, ok := seen[t.req.UserID]; ok {
			repeats = append(repeats, repeat{t, i})
			continue
		}
		seen[t.req.UserID] = len(firsts)
		firsts = append(firsts, t)
	}
	return firsts, repeats
}

// serve runs one lock grant for tickets of distinct users and returns each
// one's outcome, in order.
func (s *Service) serve(q *queue, tickets []*ticket) []outcome {
	a := q.activity
	outs := make([]outcome, len(tickets))
	set := func(idx []int, err error) {
		for _, i := range idx {
			outs[i].err = err
		}
	}
	// Buyers who hold an order need no lock and take no unit.
	pending := make([]int, len(tickets))
	for i := range tickets {
		pending[i] = i
	}
	pending = s.answerHolders(a.ID, tickets, pending, outs)
	if len(pending) == 0 {
		return outs
	}
	// The window is checked again here, not only when the buyer queued: a
	// buyer who waited past the end must not be sold to.
	if !s.now().Before(a.EndsAt) {
		set(pending, ended(a))
		return outs
	}
	if s.stillSoldOut(a.ID) {
		s.m.batches.WithLabelValues("sold_out").Inc()
		set(pending, soldOut())
		return outs
	}

	// The lease context derives from this one: it must live as long as the
	// grant can (the wait, then the TTL).
	lctx, cancel := context.WithTimeout(context.Background(), s.cfg.LockWait+s.cfg.LockTTL)
	defer cancel()
	lk, err := s.locks.Obtain(lctx, stock.LockKey(s.cfg.KeyPrefix, a.ID), s.cfg.LockTTL,
		&lock.ObtainOptions{Wait: s.cfg.LockWait, MaxBackoff: lockPoll})
	switch {
	case errors.Is(err, lock.ErrNotObtained) && !errors.Is(err, lock.ErrAcquireFailed):
		s.m.batches.WithLabelValues("lock_busy").Inc()
		set(pending, busy("the activity is too busy: another instance held its lock past the queue wait; nothing was sold", err))
		return outs
	case err != nil:
		s.m.batches.WithLabelValues("unavailable").Inc()
		e := unavailable("Redis did not answer; nothing was sold", err)
		q.failing.Store(e)
		set(pending, e)
		return outs
	}
	q.failing.Store(nil)
	defer func() {
		if err := lk.Release(context.Background()); err != nil {
			s.log.Warn("lock release", "activity_id", a.ID, "fence", lk.Fence(), "err", err)
		}
	}()

	if e := s.replicated(lk.Context(), "grant", func(ctx context.Context) error {
		return s.stock.WaitGrant(ctx, a.ID, lk.Value(), s.cfg.WaitReplicas, s.cfg.WaitTimeout)
	}); e != nil {
		q.failing.Store(e)
		set(pending, e)
		return outs
	}
	approved := s.verify(lk, a.ID, tickets, pending, outs)
	if len(approved) == 0 {
		s.m.batches.WithLabelValues("none_approved").Inc()
		return outs
	}
	s.sell(lk, a.ID, tickets, approved, outs)
	return outs
}

// stillSoldOut reports whether the activity is sold out, for everyone queued,
// without the lock: from the sold-out mark while it is fresh, then from Redis
// (which the atomic deduct would consult anyway), refreshing the mark. A
// failed look-up says no; the deduct then reports what is wrong.
func (s *Service) stillSoldOut(activityID int64) bool {
	if _, marked := s.soldOut.seen(activityID); !marked {
		return false
	}
	if s.soldOutFresh(activityID) {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), detachedTimeout)
	defer cancel()
	epoch := s.soldOut.epoch(activityID)
	left, err := s.stock.Remaining(ctx, activityID)
	switch {
	case err != nil:
		return false
	case left <= 0:
		s.markSoldOut(activityID, 0, epoch)
		return true
	}
	s.soldOut.clear(activityID)
	return false
}

// verify asks the user-verification service about the pending tickets' users
// in parallel, each call within min(UserCheckTimeout, lease left - reserve),
// sets the outcome of those not approved and returns the approved.
func (s *Service) verify(lk *lock.Lock, activityID int64, tickets []*ticket, pending []int, outs []outcome) (approved []int) {
	budget := min(s.cfg.UserCheckTimeout, lk.Remaining()-writeReserve(s.cfg.LockTTL))
	if budget <= 0 {
		for _, i := range pending {
			outs[i].err = unavailable("the activity's lease ran out before the user could be verified; nothing was sold", context.DeadlineExceeded)
		}
		return nil
	}
	vctx, cancel := context.WithTimeout(lk.Context(), budget)
	defer cancel()
	errs := make([]error, len(pending))
	var wg sync.WaitGroup
	for k, i := range pending {
		wg.Go(func() {
			// A verifier's panic is that buyer's failure, not the process's.
			defer func() {
				if r := recover(); r != nil {
					errs[k] = fmt.Errorf("user check panicked: %v", r)
				}
			}()
			errs[k] = s.users.Verify(tickets[i].origin.Into(vctx), tickets[i].req.UserID, activityID)
		})
	}
	wg.Wait()
	for k, i := range pending {
		switch err := errs[k]; {
		case errors.Is(err, usercheck.ErrRejected):
			outs[i].err = &seckill.Error{Code: seckill.EUserRejected, Message: rejectedMessage(err), Err: err}
		case err != nil:
			e := unavailable("the user-verification service failed or timed out; nothing was sold", err)
			e.RetryAfter = max(e.RetryAfter, usercheck.RetryAfter(err)) // an open breaker says how long
			outs[i].err = e
		default:
			approved = append(approved, i)
		}
	}
	return approved
}

// sell deducts the approved buyers' units in one step under the grant's
// fence, writes their orders in one transaction, and settles the units of
// orders not written.
func (s *Service) sell(lk *lock.Lock, activityID int64, tickets []*ticket, approved []int, outs []outcome) {
	lease, fence := lk.Context(), lk.Fence()
	g := stock.Grant{Fence: fence, Token: lk.Value()}
	users := make([]int64, len(approved))
	for k, i := range approved {
		users[k] = tickets[i].req.UserID
	}
	epoch := s.soldOut.epoch(activityID)
	taken, remaining, err := s.stock.Deduct(lease, activityID, g, int64(len(approved)), users...)
	switch {
	case errors.Is(err, stock.ErrSoldOut):
		s.markSoldOut(activityID, 0, epoch)
		s.m.batches.WithLabelValues("sold_out").Inc()
		for _, i := range approved {
			outs[i].err = soldOut()
		}
		return
	case errors.Is(err, stock.ErrNotLoaded):
		s.m.batches.WithLabelValues("unavailable").Inc()
		for _, i := range approved {
			outs[i].err = unavailable("the activity's stock is not loaded; an operator must preload it", err)
		}
		return
	case err != nil:
		// A deduct whose reply was lost may have landed: settling at 0
		// gives its units back if it did, and stops it if it lands later.
		s.settle(lease, activityID, g, 0, int64(len(approved)), "deduct_failed")
		s.m.batches.WithLabelValues("unavailable").Inc()
		for _, i := range approved {
			outs[i].err = unavailable("the stock store did not answer; nothing was sold", err)
		}
		return
	}
	if e := s.replicated(lease, "deduct", func(ctx context.Context) error {
		return s.stock.WaitDeduct(ctx, activityID, g, s.cfg.WaitReplicas, s.cfg.WaitTimeout)
	}); e != nil {
		// Not sold: its units go back where the deduct still is, and a
		// tombstone stops it where it is not.
		s.settle(lease, activityID, g, 0, taken, "unreplicated")
		for _, i := range approved {
			outs[i].err = e
		}
		return
	}
	crashpoint.Hit(crashpoint.AfterDeduct)
	s.m.remaining.WithLabelValues(itoa(activityID)).Set(float64(remaining))
	s.markSoldOut(activityID, remaining, epoch)
	for _, i := range approved[taken:] {
		outs[i].err = soldOut()
	}
	approved = approved[:taken]

	now := s.now().UTC()
	orders := make([]seckill.Order, len(approved))
	for k, i := range approved {
		req := tickets[i].req
		orders[k] = seckill.Order{
			ID:             newOrderID(),
			ActivityID:     activityID,
			UserID:         req.UserID,
			Status:         seckill.OrderStatusCreated,
			IdempotencyKey: req.IdempotencyKey,
			Fence:          fence,
			CreatedAt:      now,
		}
	}
	b, err := s.orders.CreateOrders(lease, activityID, fence, orders)
	if err != nil {
		s.m.batches.WithLabelValues("write_failed").Inc()
		s.afterFailedWrite(lease, activityID, g, tickets, approved, orders, err, outs)
		return
	}
	crashpoint.Hit(crashpoint.AfterCommit)
	s.m.batches.WithLabelValues("written").Inc()
	at := make(map[string]int, len(orders))
	for k, o := range orders {
		at[o.ID] = approved[k]
	}
	for _, o := range b.Written {
		s.remember(o)
		outs[at[o.ID]].order = o
	}
	for _, o := range b.Over {
		outs[at[o.ID]].err = soldOut()
	}
	if len(b.Over) > 0 {
		// The database holds every unit already: Redis had too many.
		// Keeping those units deducted moves Redis towards the truth.
		s.log.Warn("database refused units Redis had; reconcile the activity", "activity_id", activityID, "units", len(b.Over))
		s.markSoldOut(activityID, 0, epoch)
	}
	if len(b.Taken) > 0 {
		reqs := make([]BuyRequest, len(b.Taken))
		for k, o := range b.Taken {
			reqs[k] = tickets[at[o.ID]].req
		}
		for k, out := range s.explainTaken(lease, activityID, reqs) {
			outs[at[b.Taken[k].ID]] = out
		}
	}
	if keep := int64(len(b.Written) + len(b.Over)); keep < taken {
		s.settle(lease, activityID, g, keep, taken-keep, "already_ordered")
	}
}

// explainTaken answers the buyers whose orders a unique key kept out, in
// order: each already holds an order of the activity (a repeat with the same
// idempotency key gets that order again), or used the idempotency key for
// another order. One query finds the holders, within the lease; only a
// buyer who holds none (a key used elsewhere, rare) costs one more.
func (s *Service) explainTaken(lease context.Context, activityID int64, reqs []BuyRequest) []outcome {
	outs, none, err := s.keptOut(lease, activityID, reqs)
	for k := range outs {
		if err != nil || none[k] {
			outs[k].err = unavailable("the order database did not answer; nothing was sold", err)
		}
	}
	return outs
}

// keptOut learns why the orders of reqs were not written though their
// batch's transaction committed: each buyer holds an order of the activity
// (already_purchased, or that order again for a repeat of its idempotency
// key), used the key for another order (the replay's answer), or neither
// (none[k]: the database had no unit for it).
func (s *Service) keptOut(ctx context.Context, activityID int64, reqs []BuyRequest) (outs []outcome, none []bool, err error) {
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
			s.remember(existing)
			if req.IdempotencyKey != "" && existing.IdempotencyKey == req.IdempotencyKey {
				outs[k].order = existing
			} else {
				outs[k].err = holds(existing)
			}
			continue
		}
		if req.IdempotencyKey != "" {
			first, err := s.orders.OrderByIdempotencyKey(ctx, req.UserID, req.IdempotencyKey)
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
