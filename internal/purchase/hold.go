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

// A hold is the activity's lock kept by the queue's leader from one batch to
// the next while buyers keep coming. Each batch takes a fence of its own
// under it (lock.Refence): a grant of its own to the database, which writes
// a batch only under a fence newer than every batch it wrote. That lets
// batch N+1 be verified and deducted while batch N's orders are written:
// each batch's write starts when the one before it has ended, so the
// database sees the fences in order and refuses none as stale, and the key
// is never free between them for another instance to take a fence that
// would land in between.
type hold struct {
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

// grant makes the activity's lock the sale's, with a fence of its own: a
// new fence under the queue's hold while it lasts, otherwise a new hold,
// waiting up to LockWait for another instance's to end. When it cannot, it
// fails the pending buyers and returns false.
func (s *sale) grant(pending []int) bool {
	if h := s.q.hold; h != nil {
		ok, yielded := s.refence(h)
		if ok {
			return true
		}
		if yielded {
			// The waiter's next attempt comes within lockPoll: let it find
			// the key free before this process asks again.
			time.Sleep(2 * lockPoll)
		}
	}
	b, q := s.b, s.q
	// The lease's parent lives until the hold is dropped, however many
	// batches it serves.
	lctx, cancel := context.WithCancel(context.Background())
	lk, err := s.locks.Obtain(lctx, s.stock.Keys().Lock(b.activity.ID), s.cfg.Lease.TTL,
		&lock.ObtainOptions{Wait: s.cfg.Lease.Wait, MaxBackoff: lockPoll})
	switch {
	case errors.Is(err, lock.ErrNotObtained) && !errors.Is(err, lock.ErrAcquireFailed):
		cancel()
		s.m.batches.WithLabelValues("lock_busy").Inc()
		b.fail(pending, seckill.Busy("the activity is too busy: another instance held its lock past the queue wait; nothing was sold", err))
		return false
	case err != nil:
		cancel()
		s.m.batches.WithLabelValues("unavailable").Inc()
		e := seckill.Unavailable("Redis did not answer; nothing was sold", err)
		q.failing.Store(e)
		b.fail(pending, e)
		return false
	}
	q.failing.Store(nil)
	q.hold = &hold{lk: lk, cancel: cancel, written: closedChan, before: closedChan}
	s.use(lk, lk.Fence())
	return true
}

// use makes lk, at fence, the sale's grant.
func (s *sale) use(lk *lock.Lock, fence int64) {
	s.lk, s.lease = lk, lk.Context()
	s.g = stock.Grant{Fence: fence, Token: lk.Value()}
}

// refence takes a new fence under the hold h and reports whether the sale
// has it. A hold whose lease has ended, that another instance waits for
// (yielded) or that Redis did not refence is dropped instead, and the caller
// obtains the lock anew. A hold has no age limit: ending it drains the
// writes in flight, a pause in the sale, and another instance that wants
// the key says so (lock.ErrWaitedFor).
func (s *sale) refence(h *hold) (ok, yielded bool) {
	if h.lk.Context().Err() == nil {
		fence, err := h.lk.Refence(h.lk.Context(), s.cfg.Lease.TTL)
		switch {
		case err == nil:
			s.use(h.lk, fence)
			return true, false
		case errors.Is(err, lock.ErrWaitedFor):
			yielded = true
		default:
			s.log.Warn("lock refence", "activity_id", s.b.activity.ID, "err", err)
		}
	}
	s.dropHold(s.q)
	return false, yielded
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
	h := q.hold
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

// dropHold ends the queue's hold, if any, once every write side under it
// has ended: releasing the key while a batch's write is in flight would let
// another instance's newer fence reach the database first.
func (s *Service) dropHold(q *queue) {
	h := q.hold
	if h == nil {
		return
	}
	q.hold = nil
	h.backs.Wait()
	defer h.cancel()
	defer s.m.timeStep(stepRelease, time.Now())
	if err := h.lk.Release(context.Background()); err != nil {
		s.log.Warn("lock release", "activity_id", q.activity.ID, "fence", h.lk.Fence(), "err", err)
	}
}

// dropIdleHold drops the queue's hold once nothing runs under it and
// nobody waits for the next batch.
func (s *Service) dropIdleHold(q *queue) {
	if h := q.hold; h == nil || h.running.Load() > 0 || s.waiting(q) > 0 {
		return
	}
	s.dropHold(q)
}

// waiting is how many buyers wait in q.
func (s *Service) waiting(q *queue) int {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	return len(q.waiting)
}

// writeBehind runs the sale's write side (write, then finish) on its own
// goroutine, owned by the hold: it writes once the batch before it has, and
// it is waited for before the hold is dropped. The leader goes on to the
// next batch meanwhile.
func (s *sale) writeBehind(tickets []*ticket, write, finish func()) {
	q, h := s.q, s.q.hold
	after, mine := h.written, make(chan struct{})
	h.before, h.written = h.written, mine
	h.backs.Add(1)
	h.running.Add(1)
	go func() {
		defer h.backs.Done()
		defer func() { h.running.Add(-1); wakeBacks(q) }()
		s.contain(q.activity.ID, tickets, func() {
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
