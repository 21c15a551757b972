package purchase

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/tracing"
)

// queueIdle is how long a leader waits for buyers before its queue is
// dropped, so activities nobody buys cost no goroutine.
const queueIdle = 30 * time.Second

// A ticket is one buyer in an activity's queue. Exactly one of the buyer
// (abandon) and a batch (take) claims it; a taken ticket is always answered,
// once: out is set, then done closed.
type ticket struct {
	req      seckill.BuyRequest
	q        *queue
	state    atomic.Int32
	answered atomic.Bool
	// done is closed once out holds the answer. A channel of outcomes
	// carried each answer's order through a buffer of its own: a second
	// allocation and a copy of the order per buyer.
	done   chan struct{}
	out    outcome
	origin tracing.Origin // the buyer's request id and span, for the user check's call
}

const (
	queued int32 = iota
	taken
	abandoned
)

type outcome struct {
	order seckill.Order
	err   error
}

// init readies t, not yet queued, for the buyer's request. A ticket is
// allocated with its buyer's flight (inflight.go), not apart.
func (t *ticket) init(req seckill.BuyRequest) {
	t.req, t.done = req, make(chan struct{})
}

// take claims the ticket for a batch; false when its buyer left.
func (t *ticket) take() bool { return t.state.CompareAndSwap(queued, taken) }

// abandon takes the ticket out of the queue; false when a batch has it.
func (t *ticket) abandon() bool { return t.state.CompareAndSwap(queued, abandoned) }

// answer gives the buyer its outcome; only the first answer counts, so a
// batch that failed half-way can answer everyone it had not answered yet.
func (t *ticket) answer(o seckill.Order, err error) {
	if t.answered.CompareAndSwap(false, true) {
		t.out = outcome{o, err}
		close(t.done) // the batch never waits for the buyer
	}
}

// queue is one activity's buyers in this process, and its leader's state.
type queue struct {
	activity seckill.Activity
	// waiting are the buyers queued, oldest first, guarded by the Service's
	// qmu. A slice, not a channel of QueueMax: memory follows the buyers
	// actually waiting, not the bound.
	waiting []*ticket
	// ready holds a token while buyers may be waiting and the leader has
	// not yet looked: the leader's wake-up.
	ready chan struct{}
	// failing is the answer of the last batch that could not reach Redis,
	// until a batch gets the lock again: a buyer whose wait runs out behind
	// it is told the store is unavailable (503), not that the activity is
	// busy (429).
	failing atomic.Pointer[seckill.Error]
	// hold is the activity's lock while batches follow each other; only
	// the leader changes it. backDone wakes the leader when a batch's write
	// side ends, to drop a hold nothing uses any more.
	hold     *hold
	backDone chan struct{}
}

// enqueue puts t in the activity's queue, starting the queue and its leader
// if there is none. The activity's queue holds at most QueueMax buyers and
// all queues of the process together QueueMaxTotal; one more is told busy.
func (s *Service) enqueue(a seckill.Activity, t *ticket) error {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if s.closing {
		return seckill.Unavailable("the service is shutting down; nothing was sold", nil)
	}
	q := s.queues[a.ID]
	if q == nil {
		q = &queue{activity: a, ready: make(chan struct{}, 1), backDone: make(chan struct{}, 1)}
		s.queues[a.ID] = q
		s.leaders.Add(1)
		go s.lead(q)
	}
	switch {
	case len(q.waiting) >= s.cfg.QueueMax:
		s.m.abandoned.WithLabelValues("queue_full").Inc()
		return seckill.Busy("the activity is too busy: its queue is full; nothing was sold", nil)
	case s.queued >= s.cfg.QueueMaxTotal:
		s.m.abandoned.WithLabelValues("instance_full").Inc()
		return seckill.Busy("the service is too busy: its purchase queues are full; nothing was sold", nil)
	}
	t.q = q
	q.waiting = append(q.waiting, t)
	s.queued++
	s.m.queued.Set(float64(s.queued))
	// The leader needs waking only when the queue stops being empty and
	// when it reaches overlapMin (awaitTurn waits for that many); a token
	// per buyer would wake it once a buyer while it waits for a write.
	// collect keeps the token while buyers stay.
	if n := len(q.waiting); n == 1 || n == overlapMin {
		wake(q)
	}
	return nil
}

// wake gives q's leader its token, unless it has one.
func wake(q *queue) {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// lead runs the queue's batches: each takes everyone who queued while the
// one before ran, so the next batch forms while this one works and no buyer
// waits for an artificial delay. A batch's grant starts once the batch
// before the last one has written its orders (hold), so one batch is written
// while the next is verified and deducted. It returns when the queue has
// been idle for queueIdle, or is empty after Close, with its hold dropped.
func (s *Service) lead(q *queue) {
	defer s.leaders.Done()
	defer s.sell.dropHold(q)
	label := itoa(q.activity.ID)
	defer s.m.queueDepth.DeleteLabelValues(label)
	idle := time.NewTimer(queueIdle)
	defer idle.Stop()
	for {
		select {
		case <-q.ready:
			s.awaitTurn(q)
			batch, depth := s.collect(q)
			s.m.queueDepth.WithLabelValues(label).Set(float64(depth))
			if len(batch) > 0 {
				s.sell.contain(q.activity.ID, batch, func() { s.sell.run(q, batch) })
			}
			s.dropIdleHold(q)
			idle.Reset(queueIdle)
		case <-q.backDone:
			s.dropIdleHold(q)
		case <-idle.C:
			if s.retire(q) {
				return
			}
			idle.Reset(queueIdle)
		case <-s.stop:
			if s.retire(q) {
				return
			}
		}
	}
}

// contain runs a batch so that a panic in it fails the batch, not the
// process: every queue of the process would otherwise die with it. Its
// lock is released by the batch's own deferred release as the panic unwinds;
// units it deducted and did not settle stay deducted, for the books' repair
// (the sweeper) to return, never to be sold twice. Each buyer not yet
// answered is told 503.
func (p *seller) contain(activityID int64, batch []*ticket, run func()) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		p.m.batches.WithLabelValues("panic").Inc()
		p.log.Error("purchase batch panicked; its buyers are told 503", "activity_id", activityID,
			"buyers", len(batch), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		e := seckill.Unavailable("the purchase failed inside the service; if a unit was taken it is returned to the stock", fmt.Errorf("panic: %v", r))
		for _, t := range batch {
			t.answer(seckill.Order{}, e)
		}
	}()
	run()
}

// collect takes the buyers queued, oldest first, up to maxBatch, skipping
// buyers who left, and returns them with how many were waiting. When more
// wait, the leader keeps its token for the next batch.
func (s *Service) collect(q *queue) (batch []*ticket, depth int) {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	depth = len(q.waiting)
	batch = make([]*ticket, 0, min(depth, maxBatch))
	n := 0
	for ; n < depth && len(batch) < maxBatch; n++ {
		if t := q.waiting[n]; t.take() {
			batch = append(batch, t)
		}
		q.waiting[n] = nil
	}
	q.waiting = q.waiting[n:]
	if len(q.waiting) == 0 {
		q.waiting = nil // the array of a crowd that is gone goes with it
	} else {
		wake(q)
	}
	s.queued -= n
	s.m.queued.Set(float64(s.queued))
	return batch, depth
}

// retire drops the queue if nobody is waiting in it; enqueue then starts a
// new one. It reports whether it did.
func (s *Service) retire(q *queue) bool {
	s.qmu.Lock()
	defer s.qmu.Unlock()
	if len(q.waiting) > 0 {
		return false
	}
	delete(s.queues, q.activity.ID)
	return true
}
