package waitingroom

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// joinStorm joins each of users twice at once, from one goroutine a join,
// in a line of at most maxPlaces places, and returns the answers by user
// and the script calls that carried them.
func joinStorm(t *testing.T, st *Store, users, maxPlaces int64) (map[int64][]joinReply, int64) {
	t.Helper()
	var calls atomic.Int64
	run := st.joins.run
	st.joins.run = func(ctx context.Context, activityID int64, batch []joinCall) ([]joinReply, error) {
		calls.Add(1)
		return run(ctx, activityID, batch)
	}
	var (
		mu      sync.Mutex
		answers = map[int64][]joinReply{}
		wg      sync.WaitGroup
		start   = make(chan struct{})
	)
	for u := int64(1); u <= users; u++ {
		for range 2 {
			wg.Go(func() {
				<-start
				answer, after, err := st.join(context.Background(), 1, u, maxPlaces, false)
				if err != nil {
					t.Errorf("join %d: %v", u, err)
				}
				mu.Lock()
				answers[u] = append(answers[u], joinReply{answer: answer, st: after})
				mu.Unlock()
			})
		}
	}
	close(start)
	wg.Wait()
	return answers, calls.Load()
}

// Joins batched into one script call answer what one call each would: every
// user joining twice at once gets one place (one "joined", one "have"),
// the places are the arrival numbers 1..maxPlaces with none skipped, the
// bound refuses the rest ("full", twice), and each answer carries the
// user's standing after it.
// Can fail: a batch that answers its users out of order (batch.result, or
// join.lua's loop over ARGV) gives a user another's answer: a user with two
// "joined" or a member of the line told "full".
func TestBatchedJoinsGiveOnePlaceEach(t *testing.T) {
	st, _, rdb := openRoom(t, -time.Second, 10)
	const users, maxPlaces = 150, 100
	answers, calls := joinStorm(t, st, users, maxPlaces)
	if calls >= 2*users {
		t.Errorf("%d script calls for %d joins: no batch formed", calls, 2*users)
	}
	ctx := context.Background()
	line, err := rdb.ZRangeWithScores(ctx, st.space.WaitingLine(1), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(line) != maxPlaces {
		t.Fatalf("the line holds %d places, want %d", len(line), maxPlaces)
	}
	member := map[string]bool{}
	for i, z := range line {
		member[z.Member.(string)] = true
		if want := float64(1<<52 + i + 1); z.Score != want {
			t.Errorf("place %d is %v, want %v: arrival numbers without a gap", i, z.Score, want)
		}
	}
	counts := map[string]int{}
	for u, rs := range answers {
		got := map[string]int{}
		for _, r := range rs {
			got[r.answer]++
			counts[r.answer]++
		}
		placed := member[strconv.FormatInt(u, 10)]
		switch {
		case placed && !maps.Equal(got, map[string]int{joined: 1, have: 1}):
			t.Errorf("user %d has a place and was told %v, want one joined and one have", u, got)
		case !placed && !maps.Equal(got, map[string]int{isFull: 2}):
			t.Errorf("user %d has no place and was told %v, want full twice", u, got)
		}
		for _, r := range rs {
			if placed != (r.st.rank >= 0) {
				t.Errorf("user %d (%s): standing rank %d, in the line %v", u, r.answer, r.st.rank, placed)
			}
		}
	}
	// One at a time, in another room, the same joins answer the same.
	seq, _, _ := openRoom(t, -time.Second, 10)
	want := map[string]int{}
	for range 2 {
		for u := int64(1); u <= users; u++ {
			answer, _, err := seq.join(ctx, 1, u, maxPlaces, true)
			if err != nil {
				t.Fatal(err)
			}
			want[answer]++
		}
	}
	if !maps.Equal(counts, want) {
		t.Errorf("batched answers %v, one at a time %v", counts, want)
	}
}

// A pause refuses every join of a batch, and a lone join after it: the
// batch's script reads the flag with each place.
// Can fail: without join.lua's paused check, the joins get places.
func TestPausedRoomRefusesBatchedJoins(t *testing.T) {
	st, _, rdb := openRoom(t, time.Minute, 10)
	if err := rdb.HSet(context.Background(), st.space.Stock(1), "paused", time.Now().UnixMilli()).Err(); err != nil {
		t.Fatal(err)
	}
	answers, _ := joinStorm(t, st, 20, DefaultMaxPlaces)
	for u, rs := range answers {
		for _, r := range rs {
			if r.answer != isPaused || !r.st.paused {
				t.Errorf("user %d joined a paused room: %q (paused %v)", u, r.answer, r.st.paused)
			}
		}
	}
	if n, _ := rdb.ZCard(context.Background(), st.space.WaitingLine(1)).Result(); n != 0 {
		t.Errorf("a paused room's line holds %d places", n)
	}
}

// A call that panics leaves the room's batches running: the next join of
// the room gets its answer.
// Can fail: without runBatch's deferred hand-off, the room stays busy and
// the next caller waits for a turn that never comes.
func TestBatcherOutlivesAPanickingCall(t *testing.T) {
	b := newBatcher(1, func(_ context.Context, _ int64, calls []int64) ([]int64, error) {
		if calls[0] == 0 {
			panic("a bug in a call")
		}
		return calls, nil
	})
	func() {
		defer func() { _ = recover() }()
		_, _ = b.do(context.Background(), 1, 0)
	}()
	got := make(chan int64, 1)
	go func() {
		v, _ := b.do(context.Background(), 1, 7)
		got <- v
	}()
	select {
	case v := <-got:
		if v != 7 {
			t.Errorf("answer %d, want 7", v)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the room's next call never ran after a call panicked")
	}
}

// A read that goes first (a holder a note woke) runs in the room's next
// call, ahead of the ordinary reads that queued before it, and with the
// other reads that go first; the ordinary reads keep their order after.
// Can fail: without batchFor's place for the calls that go first, the
// woken holder's read joins the back of the line (at a draw, behind the
// whole crowd's reads).
func TestReadsThatGoFirstRunAheadOfTheLine(t *testing.T) {
	gate := make(chan struct{})
	var (
		mu    sync.Mutex
		order [][]int64
	)
	b := newBatcher(1, func(_ context.Context, _ int64, calls []int64) ([]int64, error) {
		mu.Lock()
		order = append(order, slices.Clone(calls))
		mu.Unlock()
		if calls[0] == 1 {
			<-gate // the call in flight
		}
		return calls, nil
	})
	queued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			b.mu.Lock()
			got := 0
			if rc := b.rooms[1]; rc != nil {
				for _, bt := range rc.waiting {
					got += len(bt.calls)
				}
			}
			b.mu.Unlock()
			if got == n {
				return
			}
		}
		t.Fatalf("%d calls never queued", n)
	}
	var wg sync.WaitGroup
	call := func(v int64, first bool) {
		wg.Go(func() {
			do := b.do
			if first {
				do = b.doFirst
			}
			if got, err := do(context.Background(), 1, v); err != nil || got != v {
				t.Errorf("call %d answered %d, %v", v, got, err)
			}
		})
	}
	call(1, false)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		mu.Lock()
		n := len(order)
		mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first call never ran")
		}
	}
	call(2, false)
	queued(1)
	call(3, false)
	queued(2)
	call(4, true)
	queued(3)
	call(5, true)
	queued(4)
	call(6, false)
	queued(5)
	close(gate)
	wg.Wait()
	want := [][]int64{{1}, {4, 5}, {2, 3, 6}}
	if !slices.EqualFunc(order, want, slices.Equal[[]int64]) {
		t.Errorf("calls ran as %v, want %v", order, want)
	}
}

// A room has as many calls in flight as the batcher has lanes; the next
// call waits for a lane and runs when one frees.
// Can fail: with the room's calls run one at a time (no lanes), the second
// call never starts while the first waits for it.
func TestARoomHasACallInFlightInEachLane(t *testing.T) {
	var inside atomic.Int64
	both := make(chan struct{})
	b := newBatcher(2, func(_ context.Context, _ int64, calls []int64) ([]int64, error) {
		if inside.Add(1) == 2 {
			close(both)
		}
		select {
		case <-both:
		case <-time.After(5 * time.Second):
			return nil, context.DeadlineExceeded
		}
		return calls, nil
	})
	var wg sync.WaitGroup
	for v := int64(1); v <= 3; v++ {
		wg.Go(func() {
			if got, err := b.do(context.Background(), 1, v); err != nil || got != v {
				t.Errorf("call %d answered %d, %v: the room's calls did not run side by side", v, got, err)
			}
		})
	}
	wg.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.rooms) != 0 {
		t.Errorf("the room still counts %d calls in flight after every call ended", b.rooms[1].flying)
	}
}
