package purchase

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
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
	// remaining is what Redis held right after the grant's deduct.
	remaining int64
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

// units returns the units the buyers at idx ask for, in order.
func (b *batch) units(idx []int) []int64 {
	units := make([]int64, len(idx))
	for k, i := range idx {
		units[k] = b.tickets[i].req.Units()
	}
	return units
}

// unitsOf is the units the buyers at idx ask for together.
func (b *batch) unitsOf(idx []int) int64 {
	var n int64
	for _, i := range idx {
		n += b.tickets[i].req.Units()
	}
	return n
}

// runBatch serves the tickets with one fence under the activity's lock and
// answers each of them. Up to the deduct it runs on the leader; the write of
// the orders and the answers run behind it (writeBehind) while the leader
// takes the next batch. A buyer who queued twice in one batch is served
// once: the repeat gets the first request's outcome when it carries the same
// idempotency key, and otherwise already_purchased when the first bought, or
// the first's error.
func (s *Service) runBatch(q *queue, tickets []*ticket) {
	s.m.batchSize.Observe(float64(len(tickets)))
	firsts, repeats := byUser(tickets)
	b := newBatch(q.activity, firsts)
	sl := &sale{Service: s, q: q, b: b}
	finish := func() {
		sl.preferHolders()
		sl.finishAdmissions()
		answerAll(b, firsts, repeats)
	}
	if !sl.sellUnderGrant() {
		finish()
		return
	}
	sl.writeBehind(tickets, sl.write, finish)
}

// answerAll answers the batch's buyers and their repeats.
func answerAll(b *batch, firsts []*ticket, repeats []repeat) {
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

// sellUnderGrant takes the batch up to its write, under a fence of its own:
// holders are answered without it; the others, if the sale is still open,
// are verified and their units deducted while the lease lasts. It reports
// whether orders are left to write.
func (s *sale) sellUnderGrant() bool {
	b, a := s.b, s.b.activity
	// Buyers who hold an order need no lock and take no unit.
	pending := s.answerHolders(b.all())
	if len(pending) == 0 {
		return false
	}
	// The window is checked again here, not only when the buyer queued: a
	// buyer who waited past the end must not be sold to.
	if !s.now().Before(a.EndsAt) {
		b.fail(pending, seckill.Ended(a))
		return false
	}
	if !s.hasRoom(a) && s.stillSoldOut(a.ID) {
		s.m.batches.WithLabelValues("sold_out").Inc()
		b.fail(pending, soldOut())
		return false
	}

	start := time.Now()
	ok := s.grant(pending)
	s.m.timeStep(stepGrant, start)
	if !ok {
		return false
	}
	if e := s.replicated(s.lease, "grant", func(ctx context.Context) error {
		return s.stock.WaitGrant(ctx, a.ID, s.g.Token, s.cfg.WaitReplicas, s.cfg.WaitTimeout)
	}); e != nil {
		s.q.failing.Store(e)
		b.fail(pending, e)
		return false
	}
	start = time.Now()
	s.approved = s.verify(pending)
	s.m.timeStep(stepVerify, start)
	if len(s.approved) == 0 {
		s.m.batches.WithLabelValues("none_approved").Inc()
		return false
	}
	return s.deductApproved()
}

// verify asks the user-verification service about the pending buyers in
// parallel, each call within min(UserCheckTimeout, lease left - reserve),
// fails those not approved and returns the approved.
func (s *sale) verify(pending []int) (approved []int) {
	b := s.b
	budget := s.lk.CallBudget(s.cfg.Lease.CallTimeout)
	if budget <= 0 {
		b.fail(pending, seckill.Unavailable("the activity's lease ran out before the user could be verified; nothing was sold", context.DeadlineExceeded))
		return nil
	}
	if _, approveAll := s.users.(usercheck.ApproveAll); approveAll {
		// Nothing to call: a goroutine per buyer would be the whole cost
		// of a check that cannot fail.
		return pending
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
