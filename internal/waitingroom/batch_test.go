package waitingroom

import (
	"context"
	"maps"
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
	b := newBatcher(func(_ context.Context, _ int64, calls []int64) ([]int64, error) {
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
