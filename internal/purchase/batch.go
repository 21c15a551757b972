package purchase

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/catalog"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/order"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// lockPoll caps the pause between attempts on a lock another instance holds:
// its batch keeps it for milliseconds, so a long pause would leave the
// activity idle while this instance's buyers wait.
const lockPoll = 5 * time.Millisecond

// batch is what one lock grant serves: tickets of distinct buyers of one
// activity, and the outcome each of them will be told, by index. Only
// seller.run sets the outcomes, from the answers its steps return.
type batch struct {
	activity seckill.Activity
	tickets  []*ticket
	outs     []outcome
}

// answer is what a step tells the buyer at index i of its batch.
type answer struct {
	i   int
	out outcome
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

// record sets the outcomes a step answered and returns the buyers it lets
// go on.
func (b *batch) record(on []int, said []answer) []int {
	for _, a := range said {
		b.outs[a.i] = a.out
	}
	return on
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

// failAll is the answer err to each buyer at idx.
func failAll(idx []int, err error) []answer {
	said := make([]answer, len(idx))
	for k, i := range idx {
		said[k] = answer{i, outcome{err: err}}
	}
	return said
}

// answersAt are outs, one outcome per buyer at idx, as answers.
func answersAt(idx []int, outs []outcome) []answer {
	said := make([]answer, len(idx))
	for k, i := range idx {
		said[k] = answer{i, outs[k]}
	}
	return said
}

// seller runs batches: the steps of one lock grant's sale, each a function
// of the buyers still in play. It holds the service's stores and memories,
// shared with the buyer's side, and nothing of any one batch.
type seller struct {
	cfg      Config
	now      func() time.Time
	locks    *lock.Client
	stock    *stock.Store
	unknowns stock.Unknowns
	orders   *order.Store
	// writes writes the batches' orders, the batches of all activities
	// waiting at once in one transaction (group commit).
	writes   *order.Committer
	users    usercheck.Verifier
	rooms    Rooms
	catalog  *catalog.Catalog
	holders  *holders
	soldOut  *soldOutMarks
	paused   *pausedMarks
	bought   *boughtMemory
	rejected rejectedMemory
	log      *slog.Logger
	m        metrics
}

// run serves the tickets with one fence under the activity's lock and
// answers each of them. Each step takes the buyers still in play and
// returns those that go on, with the answers it gave; run alone records
// them. Up to the deduct it runs on the leader; the write, the settle and
// the answers run behind it (writeBehind) while the leader takes the next
// batch. A buyer who queued twice in one batch is served once (answerAll).
func (p *seller) run(q *queue, tickets []*ticket) {
	p.m.batchSize.Observe(float64(len(tickets)))
	firsts, repeats := byUser(tickets)
	b := newBatch(q.activity, firsts)
	finish := func() {
		b.record(nil, p.holders.prefer(b))
		p.finishAdmissions(b)
		answerAll(b, firsts, repeats)
	}
	in := b.all()
	goOn := func(on []int, said []answer) bool { in = b.record(on, said); return len(in) > 0 }
	// Buyers who hold an order need no lock and take no unit.
	if !goOn(p.holders.answer(b, in, hasRoom(p.rooms, b.activity))) || !goOn(p.stillOnSale(b, in)) {
		finish()
		return
	}
	g, on, said := p.lock(q, b, in)
	if !goOn(on, said) || !goOn(p.verify(g, b, in)) {
		finish()
		return
	}
	d, on, said := p.deduct(g, b, in)
	if !goOn(on, said) {
		finish()
		return
	}
	p.writeBehind(q, tickets, func() {
		said, st := p.write(g, b.activity, in, d)
		b.record(nil, said)
		p.settle(g.lease, b.activity, g.stock, d, st)
	}, finish)
}

// answerAll answers the batch's buyers and their repeats: a repeat gets
// the first request's error, or, when the first bought, what a holder of
// that order is told.
func answerAll(b *batch, firsts []*ticket, repeats []repeat) {
	for i, t := range firsts {
		t.answer(b.outs[i].order, b.outs[i].err)
	}
	for _, r := range repeats {
		if out := b.outs[r.first]; out.err != nil {
			r.t.answer(seckill.Order{}, out.err)
		} else {
			r.t.answer(r.t.req.AnswerHolder(out.order))
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

// stillOnSale lets the buyers in go on while the sale is: the window is
// checked again here, not only when the buyer queued (a buyer who waited
// past the end must not be sold to), and an activity without a room that
// is still sold out answers everyone at once.
func (p *seller) stillOnSale(b *batch, in []int) ([]int, []answer) {
	a := b.activity
	if !p.now().Before(a.EndsAt) {
		return nil, failAll(in, seckill.Ended(a))
	}
	if !hasRoom(p.rooms, a) && p.stillSoldOut(a.ID) {
		p.m.batches.WithLabelValues("sold_out").Inc()
		return nil, failAll(in, soldOut())
	}
	return in, nil
}

// verify asks the user-verification service about the buyers in parallel,
// each call within min(UserCheckTimeout, lease left - reserve), and lets
// the approved go on.
func (p *seller) verify(g grant, b *batch, in []int) (approved []int, said []answer) {
	start := time.Now()
	defer func() {
		p.m.timeStep(stepVerify, start)
		if len(approved) == 0 {
			p.m.batches.WithLabelValues("none_approved").Inc()
		}
	}()
	budget := g.lk.CallBudget(p.cfg.Lease.CallTimeout)
	if budget <= 0 {
		return nil, failAll(in, seckill.Unavailable("the activity's lease ran out before the user could be verified; nothing was sold", context.DeadlineExceeded))
	}
	if _, approveAll := p.users.(usercheck.ApproveAll); approveAll {
		// Nothing to call: a goroutine per buyer would be the whole cost
		// of a check that cannot fail.
		return in, nil
	}
	vctx, cancel := context.WithTimeout(g.lease, budget)
	defer cancel()
	errs := make([]error, len(in))
	var wg sync.WaitGroup
	for k, i := range in {
		wg.Go(func() {
			// A verifier's panic is that buyer's failure, not the process's.
			defer func() {
				if r := recover(); r != nil {
					errs[k] = fmt.Errorf("user check panicked: %v", r)
				}
			}()
			errs[k] = p.users.Verify(b.tickets[i].origin.Into(vctx), b.req(i).UserID, b.activity.ID)
		})
	}
	wg.Wait()
	for k, i := range in {
		switch err := errs[k]; {
		case errors.Is(err, usercheck.ErrRejected):
			msg := rejectedMessage(err)
			p.rejected.remember(buyer{b.activity.ID, b.req(i).UserID}, p.now(), msg)
			said = append(said, answer{i, outcome{err: &seckill.Error{Code: seckill.EUserRejected, Message: msg, Err: err}}})
		case err != nil:
			e := seckill.Unavailable("the user-verification service failed or timed out; nothing was sold", err)
			e.RetryAfter = max(e.RetryAfter, usercheck.RetryAfter(err)) // an open breaker says how long
			said = append(said, answer{i, outcome{err: e}})
		default:
			approved = append(approved, i)
		}
	}
	return approved, said
}
