package waitingroom

import (
	"context"
	"sync"
	"time"
)

// The storm at a room's opening is thousands of joins a second to one room,
// each a read and a write of the same few keys. One script call per request
// cost the service more CPU than the rest of the request, so the
// calls of one room are batched as the purchase path batches its buyers:
// while one call of a room is in flight, the users who arrive collect in the
// next batch, and that batch's first user runs it as one script call when
// the call in flight is answered. A lone request runs at once, alone.

// maxBatchUsers bounds one call's users: one script must not hold Redis
// for long.
const maxBatchUsers = 256

// batchTimeout bounds one batch's call. The call serves every user in the
// batch, so it runs past the cancellation of the request that runs it.
const batchTimeout = 5 * time.Second

// batcher batches the calls of each room; run makes one script call of the
// calls in the order they arrived and returns one result each.
type batcher[Q, R any] struct {
	run func(ctx context.Context, activityID int64, calls []Q) ([]R, error)

	mu    sync.Mutex
	rooms map[int64]*roomCalls[Q, R] // only rooms with a call in flight
}

// roomCalls is one room's batches not yet run, behind its call in flight.
type roomCalls[Q, R any] struct {
	waiting []*batch[Q, R]
}

// batch is one script call's calls (one a user) and, once done is closed,
// its results.
type batch[Q, R any] struct {
	calls []Q
	out   []R
	err   error
	lead  chan struct{} // closed when the batch's first user may run it
	done  chan struct{} // closed when out and err are set
}

func newBatcher[Q, R any](run func(ctx context.Context, activityID int64, calls []Q) ([]R, error)) *batcher[Q, R] {
	return &batcher[Q, R]{run: run, rooms: map[int64]*roomCalls[Q, R]{}}
}

// do returns call's result, from the script call that carried it.
func (b *batcher[Q, R]) do(ctx context.Context, activityID int64, call Q) (R, error) {
	b.mu.Lock()
	rc, busy := b.rooms[activityID]
	if !busy {
		// Nothing in flight: this user's call runs now, alone.
		b.rooms[activityID] = &roomCalls[Q, R]{}
		b.mu.Unlock()
		bt := &batch[Q, R]{calls: []Q{call}, done: make(chan struct{})}
		b.runBatch(ctx, activityID, bt)
		return bt.result(0)
	}
	var bt *batch[Q, R]
	first := len(rc.waiting) == 0 || len(rc.waiting[len(rc.waiting)-1].calls) >= maxBatchUsers
	if first {
		bt = &batch[Q, R]{lead: make(chan struct{}), done: make(chan struct{})}
		rc.waiting = append(rc.waiting, bt)
	} else {
		bt = rc.waiting[len(rc.waiting)-1]
	}
	i := len(bt.calls)
	bt.calls = append(bt.calls, call)
	b.mu.Unlock()
	if first {
		// The batch's runner waits for its turn whatever its own context
		// says: the others in the batch count on it. The wait is bounded
		// by the call in flight's batchTimeout.
		<-bt.lead
		b.runBatch(ctx, activityID, bt)
		return bt.result(i)
	}
	select {
	case <-bt.done:
		return bt.result(i)
	case <-ctx.Done():
		var zero R
		return zero, ctx.Err()
	}
}

// runBatch makes bt's call, then hands the room to its next batch, or
// leaves the room idle: even when the call panics (its callers are then
// told errShortReply), so a room is never left waiting on a dead call.
func (b *batcher[Q, R]) runBatch(ctx context.Context, activityID int64, bt *batch[Q, R]) {
	defer b.handOff(activityID)
	defer close(bt.done)
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), batchTimeout)
	defer cancel()
	bt.out, bt.err = b.run(cctx, activityID, bt.calls)
}

// handOff starts the room's next batch, or leaves the room idle.
func (b *batcher[Q, R]) handOff(activityID int64) {
	b.mu.Lock()
	rc := b.rooms[activityID]
	if len(rc.waiting) == 0 {
		delete(b.rooms, activityID)
		b.mu.Unlock()
		return
	}
	next := rc.waiting[0]
	rc.waiting = rc.waiting[1:]
	b.mu.Unlock()
	close(next.lead)
}

// result is the i-th user's result; a reply short of the users is an error
// of every user's.
func (bt *batch[Q, R]) result(i int) (R, error) {
	var zero R
	if bt.err != nil {
		return zero, bt.err
	}
	if i >= len(bt.out) {
		return zero, errShortReply
	}
	return bt.out[i], nil
}
