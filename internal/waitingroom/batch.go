package waitingroom

import (
	"context"
	"slices"
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
//
// A room may have a few calls in flight at once (the batcher's lanes): on a
// loaded box a call's round trip is mostly waiting for a core (the runner's
// and its callers' wake-ups), and with one lane a room left Redis idle while
// 50,000 status reads queued at a draw. Joins keep one lane: they come
// spread over the room's opening, and more lanes made smaller batches, more
// calls and later joins on a saturated box.
//
// A call may ask to go first (doFirst): a held request woken by a note
// (an admission, the closing) reads its status ahead of the room's
// ordinary reads, which at a draw are the whole crowd's. Such calls batch
// together at the head of the queue, in the order they arrived.

// maxBatchUsers bounds one call's users: one script must not hold Redis
// for long.
const maxBatchUsers = 256

// joinLanes and readLanes are the most join and status-read calls one room
// has in flight from one instance.
const (
	joinLanes = 1
	readLanes = 4
)

// batchTimeout bounds one batch's call. The call serves every user in the
// batch, so it runs past the cancellation of the request that runs it.
const batchTimeout = 5 * time.Second

// batcher batches the calls of each room; run makes one script call of the
// calls in the order they arrived and returns one result each.
type batcher[Q, R any] struct {
	run   func(ctx context.Context, activityID int64, calls []Q) ([]R, error)
	lanes int // the most calls of one room in flight at once

	mu    sync.Mutex
	rooms map[int64]*roomCalls[Q, R] // only rooms with calls in flight
}

// roomCalls is one room's calls in flight and its batches not yet run,
// behind them: the first `first` of these carry calls that go first.
type roomCalls[Q, R any] struct {
	flying  int
	waiting []*batch[Q, R]
	first   int
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

func newBatcher[Q, R any](lanes int, run func(ctx context.Context, activityID int64, calls []Q) ([]R, error)) *batcher[Q, R] {
	return &batcher[Q, R]{run: run, lanes: max(lanes, 1), rooms: map[int64]*roomCalls[Q, R]{}}
}

// do returns call's result, from the script call that carried it.
func (b *batcher[Q, R]) do(ctx context.Context, activityID int64, call Q) (R, error) {
	return b.call(ctx, activityID, call, false)
}

// doFirst is do for a call that goes ahead of the room's ordinary calls
// waiting (not of the call in flight).
func (b *batcher[Q, R]) doFirst(ctx context.Context, activityID int64, call Q) (R, error) {
	return b.call(ctx, activityID, call, true)
}

func (b *batcher[Q, R]) call(ctx context.Context, activityID int64, call Q, ahead bool) (R, error) {
	b.mu.Lock()
	rc := b.rooms[activityID]
	if rc == nil {
		rc = &roomCalls[Q, R]{}
		b.rooms[activityID] = rc
	}
	if rc.flying < b.lanes && len(rc.waiting) == 0 {
		// A lane is free: this user's call runs now, alone.
		rc.flying++
		b.mu.Unlock()
		bt := &batch[Q, R]{calls: []Q{call}, done: make(chan struct{})}
		b.runBatch(ctx, activityID, bt)
		return bt.result(0)
	}
	bt, first := rc.batchFor(ahead)
	i := len(bt.calls)
	bt.calls = append(bt.calls, call)
	b.mu.Unlock()
	if first {
		// The batch's runner waits for its turn whatever its own context
		// says: the others in the batch count on it. The wait is bounded
		// by the batchTimeout of each call ahead of it.
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

// handOff starts the room's next batch in the lane it frees, or leaves the
// lane idle.
func (b *batcher[Q, R]) handOff(activityID int64) {
	b.mu.Lock()
	rc := b.rooms[activityID]
	if len(rc.waiting) == 0 {
		if rc.flying--; rc.flying == 0 {
			delete(b.rooms, activityID)
		}
		b.mu.Unlock()
		return
	}
	next := rc.waiting[0]
	rc.waiting = rc.waiting[1:]
	rc.first = max(rc.first-1, 0)
	b.mu.Unlock()
	close(next.lead)
}

// batchFor returns the batch a call joins, the last of its kind (the
// calls that go first, or the others) with room for it, and whether the
// call is that batch's first, a batch it starts.
func (rc *roomCalls[Q, R]) batchFor(ahead bool) (*batch[Q, R], bool) {
	end := len(rc.waiting)
	if ahead {
		end = rc.first
	}
	if end > 0 && (ahead || end > rc.first) && len(rc.waiting[end-1].calls) < maxBatchUsers {
		return rc.waiting[end-1], false
	}
	bt := &batch[Q, R]{lead: make(chan struct{}), done: make(chan struct{})}
	rc.waiting = slices.Insert(rc.waiting, end, bt)
	if ahead {
		rc.first++
	}
	return bt, true
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
