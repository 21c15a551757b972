package order

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/seckill-oss/seckill"
)

// A Committer writes the batches of concurrent callers, each of its own
// activity, in shared transactions (CreateOrderGroup): group commit, as
// Badger's doWrites does it. One goroutine takes every write waiting while
// the transaction before it ran, writes them together, and hands each caller
// its own result. A caller alone is written alone, at once; a crowd spread
// over many activities shares one transaction instead of paying one each.
type Committer struct {
	orders *Orders
	// writes is unbuffered: a write is either taken by the committer, or its
	// caller still holds it and can write it alone once the committer stops.
	writes  chan *pendingWrite
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	observe func(activities int, took time.Duration)
}

type pendingWrite struct {
	ctx  context.Context
	w    Write
	res  WriteResult
	done chan struct{}
}

// NewCommitter starts a Committer on s; observe, when not nil, is told of
// each group written: how many activities it carried and how long its
// transaction took. Close stops it.
func (s *Orders) NewCommitter(observe func(activities int, took time.Duration)) *Committer {
	c := &Committer{orders: s, observe: observe, writes: make(chan *pendingWrite), stop: make(chan struct{}), done: make(chan struct{})}
	go c.run()
	return c
}

// Close stops the committer once the group in flight is written. Writes
// that come later are written alone.
func (c *Committer) Close() {
	c.once.Do(func() { close(c.stop) })
	<-c.done
}

// CreateOrders is Orders.CreateOrders, written in a group with the writes of
// other callers waiting at the same time. A write claims nothing once ctx
// (its lock grant's lease) has ended, but one member's lease ending after
// the claim does not end the others': the group's transaction ends only
// when every member's context has. A write whose activity's row another
// transaction holds leaves the group (ErrRowBusy) and is written alone, here,
// waiting for its row within ctx while the committer writes the others.
func (c *Committer) CreateOrders(ctx context.Context, activityID, fence int64, orders []seckill.Order) (Batch, error) {
	p := &pendingWrite{ctx: ctx, w: Write{ActivityID: activityID, Fence: fence, Orders: orders, Lease: ctx}, done: make(chan struct{})}
	select {
	case c.writes <- p:
		<-p.done
		if errors.Is(p.res.Err, ErrRowBusy) {
			return c.orders.CreateOrders(ctx, activityID, fence, orders)
		}
		return p.res.Batch, p.res.Err
	case <-ctx.Done():
		return Batch{}, createErr(len(orders), activityID, context.Cause(ctx))
	case <-c.stop:
		return c.orders.CreateOrders(ctx, activityID, fence, orders)
	}
}

// run forms and writes groups until Close. A write for an activity already
// in the group waits for the next one.
func (c *Committer) run() {
	defer close(c.done)
	var next []*pendingWrite
	for {
		if len(next) == 0 {
			select {
			case p := <-c.writes:
				next = append(next, p)
			case <-c.stop:
				return
			}
		}
		group, rows, held := next[:0:0], 0, next[:0:0]
		in := make(map[int64]bool)
		add := func(p *pendingWrite) {
			if in[p.w.ActivityID] || (len(group) > 0 && rows+len(p.w.Orders) > maxGroupRows) {
				held = append(held, p)
				return
			}
			in[p.w.ActivityID] = true
			group, rows = append(group, p), rows+len(p.w.Orders)
		}
		for _, p := range next {
			add(p)
		}
	drain:
		for len(held) == 0 {
			select {
			case p := <-c.writes:
				add(p)
			default:
				break drain
			}
		}
		c.write(group)
		next = held
	}
}

// write writes the group under a context that ends when every member's has,
// and answers each member.
func (c *Committer) write(group []*pendingWrite) {
	live := group[:0:0]
	for _, p := range group {
		if err := p.ctx.Err(); err != nil {
			p.res.Err = createErr(len(p.w.Orders), p.w.ActivityID, context.Cause(p.ctx))
			close(p.done)
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(live[0].ctx))
	defer cancel(nil)
	writes := make([]Write, len(live))
	var running atomic.Int64
	running.Store(int64(len(live)))
	for i, p := range live {
		writes[i] = p.w
		stop := context.AfterFunc(p.ctx, func() {
			if running.Add(-1) == 0 {
				cancel(context.Cause(p.ctx))
			}
		})
		defer stop()
	}
	// A panic in the write fails the group, not the committer: its members
	// are answered, and the next groups are written. Where it struck is not
	// known, so neither is whether COMMIT ran: the members look up their
	// orders as after any COMMIT of unknown outcome.
	answered := 0
	defer func() {
		if r := recover(); r != nil {
			for _, p := range live[answered:] {
				p.res.Err = createErr(len(p.w.Orders), p.w.ActivityID, fmt.Errorf("%w: the group's write panicked: %v", ErrCommitUnknown, r))
				close(p.done)
			}
		}
	}()
	start := time.Now()
	results := c.orders.CreateOrderGroup(ctx, writes)
	if c.observe != nil {
		c.observe(len(live), time.Since(start))
	}
	for i, r := range results {
		live[i].res = r
		close(live[i].done)
		answered++
	}
}
