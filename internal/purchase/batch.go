package purchase

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// lockPoll caps the pause between attempts on a lock another instance holds:
// its batch keeps it for milliseconds, so a long pause would leave the
// activity idle while this instance's buyers wait.
const lockPoll = 5 * time.Millisecond

// batch is what one lock grant serves: tickets of distinct buyers of one
// activity, and the outcome each of them will be told, by index. The steps
// of a grant (holders, verification, deduct, write) each narrow a list of
// indexes still to be served and fail the others.
type batch struct {
	activity seckill.Activity
	tickets  []*ticket
	outs     []outcome
}

// sale is one lock grant's work for a batch: the holders answered first,
// the verification, the deduct, the orders' write and the units that go
// back. It carries what those steps share.
type sale struct {
	*Service
	q *queue
	b *batch
	// Set by grant.
	lk    *lock.Lock
	lease context.Context // the grant's lease: lk.Context()
	g     stock.Grant
	// Set by sell: the sold-out epoch read before the deduct, the buyers
	// still being sold to (indexes into b) and, once placed, their orders.
	epoch    uint64
	approved []int
	placed   []seckill.Order
}

func newBatch(a seckill.Activity, tickets []*ticket) *batch {
	return &batch{activity: a, tickets: tickets, outs: make([]outcome, len(tickets))}
}

// all returns the indexes of every buyer of the batch.
func (b *batch) all() []int {
	idx := make([]int, len(b.tickets))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// fail makes err the outcome of the buyers at idx.
func (b *batch) fail(idx []int, err error) {
	for _, i := range idx {
		b.outs[i].err = err
	}
}

// req is the purchase request of the buyer at i.
func (b *batch) req(i int) seckill.BuyRequest { return b.tickets[i].req }

// users returns the user ids of the buyers at idx, in order.
func (b *batch) users(idx []int) []int64 {
	users := make([]int64, len(idx))
	for k, i := range idx {
		users[k] = b.tickets[i].req.UserID
	}
	return users
}

// runBatch serves the tickets with one lock grant and answers each of them.
// A buyer who queued twice in one batch is served once: the repeat gets the
// first request's outcome when it carries the same idempotency key, and
// otherwise already_purchased when the first bought, or the first's error.
func (s *Service) runBatch(q *queue, tickets []*ticket) {
	s.m.batchSize.Observe(float64(len(tickets)))
	firsts, repeats := byUser(tickets)
	b := newBatch(q.activity, firsts)
	sl := &sale{Service: s, q: q, b: b}
	sl.sellUnderGrant()
	sl.preferHolders()
	sl.finishAdmissions()
	for i, t := range firsts {
		t.answer(b.outs[i].order, b.outs[i].err)
	}
	for _, r := range repeats {
		first, out := firsts[r.first], b.outs[r.first]
		switch {
		case r.t.req.IdempotencyKey != "" && r.t.req.IdempotencyKey == first.req.IdempotencyKey:
			r.t.answer(out.order, out.err)
		case out.err == nil:
			r.t.answer(seckill.Order{}, seckill.Holds(out.order))
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

// sellUnderGrant serves the batch under one grant of the activity's lock:
// holders are answered without it; the others, if the sale is still open,
// are verified and sold to while the grant's lease lasts.
func (s *sale) sellUnderGrant() {
	b, a := s.b, s.b.activity
	// Buyers who hold an order need no lock and take no unit.
	pending := s.answerHolders(b.all())
	if len(pending) == 0 {
		return
	}
	// The window is checked again here, not only when the buyer queued: a
	// buyer who waited past the end must not be sold to.
	if !s.now().Before(a.EndsAt) {
		b.fail(pending, seckill.Ended(a))
		return
	}
	if s.stillSoldOut(a.ID) {
		s.m.batches.WithLabelValues("sold_out").Inc()
		b.fail(pending, soldOut())
		return
	}

	start := time.Now()
	release, ok := s.grant(pending)
	s.m.timeStep(stepGrant, start)
	if !ok {
		return
	}
	defer release()
	if e := s.replicated(s.lease, "grant", func(ctx context.Context) error {
		return s.stock.WaitGrant(ctx, a.ID, s.lk.Value(), s.cfg.WaitReplicas, s.cfg.WaitTimeout)
	}); e != nil {
		s.q.failing.Store(e)
		b.fail(pending, e)
		return
	}
	start = time.Now()
	s.approved = s.verify(pending)
	s.m.timeStep(stepVerify, start)
	if len(s.approved) == 0 {
		s.m.batches.WithLabelValues("none_approved").Inc()
		return
	}
	s.sell()
}

// grant obtains the activity's lock for the batch, waiting up to LockWait
// for another instance's grant to end, makes it the sale's, and returns its
// release. When it cannot, it fails the pending buyers and returns false.
func (s *sale) grant(pending []int) (func(), bool) {
	b, q := s.b, s.q
	// The lease context derives from this one: it must live as long as the
	// grant can (the wait, then the TTL).
	lctx, cancel := context.WithTimeout(context.Background(), s.cfg.LockWait+s.cfg.LockTTL)
	lk, err := s.locks.Obtain(lctx, keys.Lock(s.cfg.KeyPrefix, b.activity.ID), s.cfg.LockTTL,
		&lock.ObtainOptions{Wait: s.cfg.LockWait, MaxBackoff: lockPoll})
	switch {
	case errors.Is(err, lock.ErrNotObtained) && !errors.Is(err, lock.ErrAcquireFailed):
		cancel()
		s.m.batches.WithLabelValues("lock_busy").Inc()
		b.fail(pending, seckill.Busy("the activity is too busy: another instance held its lock past the queue wait; nothing was sold", err))
		return nil, false
	case err != nil:
		cancel()
		s.m.batches.WithLabelValues("unavailable").Inc()
		e := seckill.Unavailable("Redis did not answer; nothing was sold", err)
		q.failing.Store(e)
		b.fail(pending, e)
		return nil, false
	}
	q.failing.Store(nil)
	s.lk, s.lease = lk, lk.Context()
	s.g = stock.Grant{Fence: lk.Fence(), Token: lk.Value()}
	return func() {
		defer cancel()
		defer s.m.timeStep(stepRelease, time.Now())
		if err := lk.Release(context.Background()); err != nil {
			s.log.Warn("lock release", "activity_id", b.activity.ID, "fence", lk.Fence(), "err", err)
		}
	}, true
}

// verify asks the user-verification service about the pending buyers in
// parallel, each call within min(UserCheckTimeout, lease left - reserve),
// fails those not approved and returns the approved.
func (s *sale) verify(pending []int) (approved []int) {
	b := s.b
	budget := s.lk.CallBudget(s.cfg.UserCheckTimeout)
	if budget <= 0 {
		b.fail(pending, seckill.Unavailable("the activity's lease ran out before the user could be verified; nothing was sold", context.DeadlineExceeded))
		return nil
	}
	vctx, cancel := context.WithTimeout(s.lease, budget)
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
			errs[k] = s.users.Verify(b.tickets[i].origin.Into(vctx), b.req(i).UserID, b.activity.ID)
		})
	}
	wg.Wait()
	for k, i := range pending {
		switch err := errs[k]; {
		case errors.Is(err, usercheck.ErrRejected):
			msg := rejectedMessage(err)
			s.rejected.remember(buyer{b.activity.ID, b.req(i).UserID}, s.now(), msg)
			b.outs[i].err = &seckill.Error{Code: seckill.EUserRejected, Message: msg, Err: err}
		case err != nil:
			e := seckill.Unavailable("the user-verification service failed or timed out; nothing was sold", err)
			e.RetryAfter = max(e.RetryAfter, usercheck.RetryAfter(err)) // an open breaker says how long
			b.outs[i].err = e
		default:
			approved = append(approved, i)
		}
	}
	return approved
}
