package waitingroom

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill"
	"github.com/seckill-oss/seckill/internal/stock"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
)

// Held queue/mine requests (docs/API.md "Waiting for a change"), on two
// instances sharing one room in the real Redis: A admits and sells, B holds.

// instances are two Rooms on one room of activity 1, each with its own
// Redis client, store and watches, as two processes have.
type instances struct {
	a, b *Room
	sk   *stock.Store
	st   *Store
}

// twoInstances opens activity 1's room of units, starting after startsIn,
// and builds two instances on it; cfg is B's.
func twoInstances(t *testing.T, startsIn time.Duration, units int64, cfg Config) instances {
	t.Helper()
	st, sk, _ := openRoom(t, startsIn, units)
	now := time.Now()
	a := seckill.Activity{ID: 1, TotalStock: units, StartsAt: now.Add(startsIn), EndsAt: now.Add(time.Hour),
		WaitingRoom: &seckill.WaitingRoom{OpensAt: now.Add(-time.Minute)}}
	build := func(s *Store, cfg Config) *Room {
		r, err := New(cfg, Deps{Store: s,
			Activity: func(context.Context, int64) (seckill.Activity, error) { return a, nil },
			Sold: func(context.Context, int64) (held, unpaid, total int64, err error) {
				left, err := sk.Remaining(context.Background(), 1)
				return units - left, 0, units, err
			}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(r.ReleaseHolds)
		return r
	}
	other := NewStore(testenv.Redis(t), st.space, 0, 0)
	return instances{a: build(st, Config{}), b: build(other, cfg), sk: sk, st: st}
}

// answer is a held request's answer and when it came.
type answer struct {
	q   seckill.QueueStatus
	err error
	at  time.Time
}

// holdOn starts B's held queue/mine of the user and waits until B holds it.
func holdOn(t *testing.T, r *Room, user int64, wait time.Duration) <-chan answer {
	t.Helper()
	out := make(chan answer, 1)
	go func() {
		q, err := r.MineWait(context.Background(), 1, user, wait)
		out <- answer{q, err, time.Now()}
	}()
	// Held once it is counted and its watch has read its cursor, plus the
	// status read.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		r.holds.mu.Lock()
		w := r.holds.rooms[1]
		ok := w != nil && len(w.holders[user]) > 0
		r.holds.mu.Unlock()
		if ok {
			<-w.ready
		}
		if ok {
			time.Sleep(100 * time.Millisecond)
			return out
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("user %d's request was not held", user)
	return nil
}

// within waits for a held answer, failing past limit after since.
func within(t *testing.T, got <-chan answer, since time.Time, limit time.Duration, what string) answer {
	t.Helper()
	select {
	case a := <-got:
		if d := a.at.Sub(since); d > limit {
			t.Errorf("%s: answered %v after, want within %v (%+v, %v)", what, d.Round(time.Millisecond), limit, a.q, a.err)
		}
		return a
	case <-time.After(15 * time.Second):
		t.Fatalf("%s: no answer within 15 s", what)
	}
	return answer{}
}

// A request held on B learns within a second of A admitting its user.
// Can fail: without admit.lua's note, B holds it its whole wait (10 s).
func TestHeldRequestLearnsAnAdmissionOnAnotherInstance(t *testing.T) {
	in := twoInstances(t, 0, 1, Config{})
	mustJoin(t, in.st, 1, 2)
	got := holdOn(t, in.b, 1, 10*time.Second)
	admitted := time.Now()
	if res, err := in.a.st.admit(context.Background(), 1, Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute}); err != nil || res.admitted != 1 {
		t.Fatalf("A's step: %+v, %v; want user 1 admitted", res, err)
	}
	a := within(t, got, admitted, time.Second, "the admitted user's held request")
	if a.err != nil || a.q.State != seckill.QueueAdmitted {
		t.Errorf("held answer %+v, %v; want admitted", a.q, a.err)
	}
}

// A request held on B learns within a second of the room closing when A
// sold the last unit (A's admitter closes the room).
// Can fail: without close.lua's note, B holds it its whole wait (10 s).
func TestHeldRequestLearnsTheCloseOnAnotherInstance(t *testing.T) {
	in := twoInstances(t, 0, 1, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	mustJoin(t, in.st, 1, 2)
	if res, err := in.a.st.admit(ctx, 1, Pace{MinRate: 1000, MaxRate: 1000, TTL: time.Minute}); err != nil || res.admitted != 1 {
		t.Fatalf("A's step: %+v, %v; want user 1 admitted", res, err)
	}
	got := holdOn(t, in.b, 2, 10*time.Second)
	done := make(chan struct{})
	go func() { defer close(done); in.a.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if _, _, _, err := in.sk.DeductEach(ctx, 1, stock.Grant{Fence: 1, Token: "a"}, []int64{1}, []int64{1}); err != nil {
		t.Fatal(err)
	}
	sold := time.Now()
	in.a.Finish(ctx, 1, map[int64]string{1: "o1"}, nil)
	closedAt := waitClosed(t, in.st)
	a := within(t, got, closedAt, time.Second, "the waiting user's held request after the close")
	if a.err != nil || a.q.State != seckill.QueueClosed || a.q.Reason != seckill.ESoldOut {
		t.Errorf("held answer %+v, %v; want closed, sold_out", a.q, a.err)
	}
	t.Logf("last unit sold to answer: %v; close to answer: %v", a.at.Sub(sold).Round(time.Millisecond), a.at.Sub(closedAt).Round(time.Millisecond))
}

// waitClosed returns when the room was first seen closed.
func waitClosed(t *testing.T, st *Store) time.Time {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if c, _ := st.rdb.HGet(context.Background(), st.room(1), "closed").Result(); c != "" {
			return time.Now()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("the room did not close within 5 s of the last unit's sale")
	return time.Time{}
}

// A held request whose user's state does not change is answered at its
// wait with the status then; a pre-queue member's is answered at the draw.
// Can fail: without the hold's timer, neither is answered (no note comes).
func TestHeldRequestEndsAtItsWaitOrTheDraw(t *testing.T) {
	in := twoInstances(t, 1500*time.Millisecond, 1, Config{})
	mustJoin(t, in.st, 1)
	start := time.Now()
	a := heldFor(t, in.b, 1, time.Second)
	if d := a.at.Sub(start); a.err != nil || a.q.State != seckill.QueuePrequeue || d < time.Second || d > 1500*time.Millisecond {
		t.Errorf("a pre-queue member held 1 s: %+v, %v after %v; want prequeue after 1 s", a.q, a.err, d)
	}
	a = heldFor(t, in.b, 1, 10*time.Second)
	if d := a.at.Sub(start); a.err != nil || a.q.State != seckill.QueueWaiting || d > 2500*time.Millisecond {
		t.Errorf("a pre-queue member held over the draw: %+v, %v after %v; want waiting at the start (1.5 s)", a.q, a.err, d)
	}
}

// heldFor is B's held queue/mine of the user, failing the test when it is
// not answered within its wait and 3 s.
func heldFor(t *testing.T, r *Room, user int64, wait time.Duration) answer {
	t.Helper()
	got := make(chan answer, 1)
	go func() {
		q, err := r.MineWait(context.Background(), 1, user, wait)
		got <- answer{q, err, time.Now()}
	}()
	select {
	case a := <-got:
		return a
	case <-time.After(wait + 3*time.Second):
		t.Fatalf("a request held %v: no answer %v after its wait", wait, 3*time.Second)
	}
	return answer{}
}

// A note the watch's cursor cannot reach (after a failover the new
// primary's stream may be behind the cursor, and its ids lower) still
// ends the hold within a second, with the right state: the count of notes
// tells the watch it missed one, and it wakes every holder.
// Can fail: without the count's check, B holds the request its whole wait.
func TestMissedNoteStillWakesTheHolder(t *testing.T) {
	in := twoInstances(t, 0, 1, Config{})
	mustJoin(t, in.st, 1, 2)
	ctx := context.Background()
	rdb, notes := in.st.rdb, in.st.space.WaitingNotes(1)
	// An earlier note (of a user not in this room) puts the cursor ahead.
	if err := rdb.HIncrBy(ctx, in.st.room(1), "notes", 1).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XAdd(ctx, xadd(notes, "*", 1, "99")).Err(); err != nil {
		t.Fatal(err)
	}
	got := holdOn(t, in.b, 1, 10*time.Second)
	// As a failover to a replica whose clock is behind: the stream starts
	// again below the cursor, and the admission comes with a note there.
	if err := rdb.Del(ctx, notes).Err(); err != nil {
		t.Fatal(err)
	}
	admitted := time.Now()
	pipe := rdb.TxPipeline()
	pipe.ZRem(ctx, in.st.space.WaitingLine(1), "1")
	pipe.ZAdd(ctx, in.st.space.WaitingAdmitted(1), redisZ(admitted.Add(time.Minute), "1"))
	n := pipe.HIncrBy(ctx, in.st.room(1), "notes", 1)
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XAdd(ctx, xadd(notes, "1-1", n.Val(), "1")).Err(); err != nil {
		t.Fatal(err)
	}
	a := within(t, got, admitted, time.Second, "a held request whose note the cursor could not reach")
	if a.err != nil || a.q.State != seckill.QueueAdmitted {
		t.Errorf("held answer %+v, %v; want admitted", a.q, a.err)
	}
}

// On shutdown every held request is answered at once, and a later one is
// not held.
// Can fail: without the stop's wake-up, the held request waits its 10 s.
func TestShutdownAnswersHeldRequestsAtOnce(t *testing.T) {
	in := twoInstances(t, 0, 1, Config{})
	mustJoin(t, in.st, 1, 2)
	got := holdOn(t, in.b, 2, 10*time.Second)
	stopped := time.Now()
	in.b.ReleaseHolds()
	a := within(t, got, stopped, 300*time.Millisecond, "a held request at shutdown")
	if a.err != nil || a.q.State != seckill.QueueWaiting {
		t.Errorf("held answer %+v, %v; want waiting", a.q, a.err)
	}
	start := time.Now()
	if q, err := in.b.MineWait(context.Background(), 1, 2, 10*time.Second); err != nil || time.Since(start) > 300*time.Millisecond {
		t.Errorf("a request after the shutdown began: %+v, %v after %v; want an answer at once", q, err, time.Since(start))
	}
}

// Past MaxHeld held requests, wait is ignored: the status is answered at
// once.
// Can fail: without the cap, the second request is held its 10 s.
func TestPastTheCapAnswersAtOnce(t *testing.T) {
	in := twoInstances(t, 0, 1, Config{MaxHeld: 1})
	mustJoin(t, in.st, 1, 2, 3)
	holdOn(t, in.b, 2, 10*time.Second)
	start := time.Now()
	q, err := in.b.MineWait(context.Background(), 1, 3, 10*time.Second)
	if d := time.Since(start); err != nil || q.State != seckill.QueueWaiting || d > 300*time.Millisecond {
		t.Errorf("a request past the cap: %+v, %v after %v; want waiting at once", q, err, d)
	}
}

func redisZ(score time.Time, member string) redis.Z {
	return redis.Z{Score: float64(score.UnixMilli()), Member: member}
}

// xadd is note.lua's entry of an admission, at an id of the caller's.
func xadd(stream, id string, n int64, users string) *redis.XAddArgs {
	return &redis.XAddArgs{Stream: stream, ID: id, Values: []any{"n", n, "a", users}}
}

// A hold says why its wait ended: a note (its holder then reads ahead of
// the room's other reads), its time, or its caller gone.
// Can fail: a wait that reports a note's wake-up as the time's leaves the
// woken holder's read at the back of the room's line, behind a draw's.
func TestAHoldSaysWhyItsWaitEnded(t *testing.T) {
	hs := newHolds(nil, slog.New(slog.DiscardHandler), 10)
	h := &hold{wake: make(chan struct{}, 1)}
	h.signal()
	if got := h.wait(context.Background(), hs, time.Now().Add(time.Minute)); got != wokenByNote {
		t.Errorf("woken by a note: %v, want wokenByNote", got)
	}
	if got := h.wait(context.Background(), hs, time.Now().Add(10*time.Millisecond)); got != wokenByTime {
		t.Errorf("its time passed: %v, want wokenByTime", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if got := h.wait(ctx, hs, time.Now().Add(time.Minute)); got != wokenByGone {
		t.Errorf("its caller gone: %v, want wokenByGone", got)
	}
}
