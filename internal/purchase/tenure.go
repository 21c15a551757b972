package purchase

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/lock"
	"github.com/seckill-oss/seckill/internal/stock"
)

// A tenure is the activity's lock kept by the queue's leader from one batch to
// the next while buyers keep coming. Each batch takes a fence of its own
// under it (lock.Refence): a grant of its own to the database, which writes
// a batch only under a fence newer than every batch it wrote. That lets
// batch N+1 be verified and deducted while batch N's orders are written:
// each batch's write starts when the one before it has ended, so the
// database sees the fences in order and refuses none as stale, and the key
// is never free between them for another instance to take a fence that
// would land in between.
type tenure struct {
	lk     *lock.Lock
	cancel context.CancelFunc // ends the lease's parent, after the release
	// written is closed when the latest batch's write side has written (or
	// failed to write) its orders; before it, the batch's before it. A batch
	// writes after written; the leader starts a batch's grant only after
	// before, so at most two batches are past their deduct and unwritten.
	written, before chan struct{}
	backs           sync.WaitGroup // batches whose write side runs
	running         atomic.Int32   // the same, for the leader to read
}

// closedChan is a write side that has already ended.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// grant is one batch's share of the tenure of the activity's lock: the lock, its lease
// (the lock's context, which ends when the lease does) and the grant the
// stock and the database know it by, with the batch's own fence.
type grant struct {
	lk    *lock.Lock
	lease context.Context
	stock stock.Grant
}

// grantOf is the grant of lk at fence.
func grantOf(lk *lock.Lock, fence int64) grant {
	return grant{lk: lk, lease: lk.Context(), stock: stock.Grant{Fence: fence, Token: lk.Value()}}
}

// lock takes the batch's grant and waits, when configured, for the Redis
// replicas to hold it; the buyers in go on under it, or are all told why
// not.
func (p *seller) lock(q *queue, b *batch, in []int) (grant, []int, []answer) {
	start := time.Now()
	g, err := p.grantFor(q)
	p.m.timeStep(stepGrant, start)
	if err != nil {
		return g, nil, failAll(in, err)
	}
	if e := p.replicated(g.lease, "grant", func(ctx context.Context) error {
		return p.stock.WaitGrant(ctx, b.activity.ID, g.stock.Token, p.cfg.WaitReplicas, p.cfg.WaitTimeout)
	}); e != nil {
		q.failing.Store(e)
		return g, nil, failAll(in, e)
	}
	return g, in, nil
}

// grantFor makes the activity's lock a batch's, with a fence of its own: a
// new fence under the queue's tenure while it lasts, otherwise a new tenure,
// waiting up to LockWait for another instance's to end. When it cannot, it
// returns the answer for the batch's buyers.
func (p *seller) grantFor(q *queue) (grant, error) {
	if h := q.tenure; h != nil {
		g, ok, yielded := p.refence(q, h)
		if ok {
			return g, nil
		}
		if yielded {
			// The waiter's next attempt comes within lockPoll: let it find
			// the key free before this process asks again.
			time.Sleep(2 * lockPoll)
		}
	}
	// The lease's parent lives until the tenure ends, however many
	// batches it serves.
	lctx, cancel := context.WithCancel(context.Background())
	lk, err := p.locks.Obtain(lctx, p.stock.Keys().Lock(q.activity.ID), p.cfg.Lease.TTL,
		&lock.ObtainOptions{Wait: p.cfg.Lease.Wait, MaxBackoff: lockPoll})
	switch {
	case errors.Is(err, lock.ErrNotObtained) && !errors.Is(err, lock.ErrAcquireFailed):
		cancel()
		p.m.batches.WithLabelValues("lock_busy").Inc()
		return grant{}, seckill.Busy("the activity is too busy: another instance held its lock past the queue wait; nothing was sold", err)
	case err != nil:
		cancel()
		p.m.batches.WithLabelValues("unavailable").Inc()
		e := seckill.Unavailable("Redis did not answer; nothing was sold", err)
		q.failing.Store(e)
		return grant{}, e
	}
	q.failing.Store(nil)
	q.tenure = &tenure{lk: lk, cancel: cancel, written: closedChan, before: closedChan}
	return grantOf(lk, lk.Fence()), nil
}

// refence takes a new fence under the queue's tenure h and reports whether
// the batch has it. A tenure whose lease has ended, that another instance
// waits for (yielded) or that Redis did not refence is dropped instead, and
// the caller obtains the lock anew. A tenure has no age limit: ending it
// drains the writes in flight, a pause in the sale, and another instance
// that wants the key says so (lock.ErrWaitedFor).
func (p *seller) refence(q *queue, h *tenure) (g grant, ok, yielded bool) {
	if h.lk.Context().Err() == nil {
		fence, err := h.lk.Refence(h.lk.Context(), p.cfg.Lease.TTL)
		switch {
		case err == nil:
			return grantOf(h.lk, fence), true, false
		case errors.Is(err, lock.ErrWaitedFor):
			yielded = true
		default:
			p.log.Warn("lock refence", "activity_id", q.activity.ID, "err", err)
		}
	}
	p.endTenure(q)
	return grant{}, false, yielded
}

// overlapMin is the fewest buyers worth a batch of their own while the
// batch before them is still being written. Fewer wait for that write to
// end and join the buyers who come meanwhile: a batch costs its fence,
// deduct, verification and share of a transaction whatever its size, and on
// a box the crowd keeps busy, many small batches sell fewer orders than a
// few large ones.
const overlapMin = 8

// awaitTurn waits, before the leader collects the next batch, until it may
// be granted: the batch before the last one has written its orders, and so
// has the last one unless overlapMin buyers wait already.
func (s *Service) awaitTurn(q *queue) {
	h := q.tenure
	if h == nil {
		return
	}
	<-h.before
	for s.waiting(q) < overlapMin {
		select {
		case <-h.written:
			return
		case <-q.ready: // a buyer came; collect wakes the leader again if buyers stay
		}
	}
}

// endTenure ends the queue's tenure, if any, once every write side under it
// has ended: releasing the key while a batch's write is in flight would let
// another instance's newer fence reach the database first.
func (p *seller) endTenure(q *queue) {
	h := q.tenure
	if h == nil {
		return
	}
	q.tenure = nil
	h.backs.Wait()
	defer h.cancel()
	defer p.m.timeStep(stepRelease, time.Now())
	if err := h.lk.Release(context.Background()); err != nil {
		p.log.Warn("lock release", "activity_id", q.activity.ID, "fence", h.lk.Fence(), "err", err)
	}
}

// endIdleTenure ends the queue's tenure once nothing runs under it and
// nobody waits for the next batch.
func (s *Service) endIdleTenure(q *queue) {
	if h := q.tenure; h == nil || h.running.Load() > 0 || s.waiting(q) > 0 {
		return
	}
	s.sell.endTenure(q)
}

// waiting is how many buyers wait in q.
func (s *Service) waiting(q *queue) int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(q.waiting)
}

// writeBehind runs a batch's write side (write, then finish) on its own
// goroutine, owned by the queue's tenure: it writes once the batch before it
// has, and it is waited for before the tenure ends. The leader goes on
// to the next batch meanwhile.
func (p *seller) writeBehind(q *queue, tickets []*ticket, write, finish func()) {
	h := q.tenure
	after, mine := h.written, make(chan struct{})
	h.before, h.written = h.written, mine
	h.backs.Add(1)
	h.running.Add(1)
	go func() {
		defer h.backs.Done()
		defer func() { h.running.Add(-1); wakeBacks(q) }()
		p.contain(q.activity.ID, tickets, func() {
			func() {
				defer close(mine) // also when the write panics: the next batch must not wait for ever
				<-after
				write()
			}()
			finish()
		})
	}()
}

// wakeBacks tells q's leader that a write side has ended.
func wakeBacks(q *queue) {
	select {
	case q.backDone <- struct{}{}:
	default:
	}
}
