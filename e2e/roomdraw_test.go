package e2e_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/usercheck"
)

// The waiting room's draw, end to end: a crowd that joins in a known
// order, bots among it, and whom the draw lets buy.

// crowdOutcome is what a crowd of room users saw.
type crowdOutcome struct {
	mu         sync.Mutex
	winners    []int64 // users who got a 201, in no order
	soldOutAdm []int64 // admitted users told sold_out: must stay empty
	final      map[int64]queueStatus
	polls      atomic.Int64
}

// runCrowd makes every user poll their place (polls times each round: a
// greedy user polls more), buy when admitted, and stops when everyone is in
// a final state, or fails after within.
func runCrowd(t *testing.T, instances []*stack, activity int64, users []int64, polls func(int64) int, within time.Duration) *crowdOutcome {
	t.Helper()
	out := &crowdOutcome{final: map[int64]queueStatus{}}
	left := rounds(users, 32, 200*time.Millisecond, time.Now().Add(within), func(u int64) bool {
		in := instances[int(u)%len(instances)]
		var q queueStatus
		for range polls(u) {
			q = in.queue(http.MethodGet, activity, u)
			out.polls.Add(1)
		}
		if q.status == http.StatusOK && q.state == "admitted" {
			r := in.buy(activity, u, nil)
			out.mu.Lock()
			switch {
			case r.status == http.StatusCreated:
				out.winners = append(out.winners, u)
			case r.code() == "sold_out":
				out.soldOutAdm = append(out.soldOutAdm, u)
			}
			out.mu.Unlock()
			q = in.queue(http.MethodGet, activity, u)
		}
		switch {
		case q.status != http.StatusOK:
			t.Errorf("user %d: queue/mine %d %s", u, q.status, q.code)
		case q.state == "done" || q.state == "closed" || q.state == "lapsed":
			out.mu.Lock()
			out.final[u] = q
			out.mu.Unlock()
			return true
		}
		return false
	})
	if len(left) > 0 {
		t.Fatalf("%d users not final after %v, e.g. user %d", len(left), within, left[0])
	}
	return out
}

// TestWaitingRoomDrawIsFair: 2,000 users join the pre-queue of 200 units in
// a known order through two instances; the first 200 of them (the fastest:
// bots) join five times each and poll five times as often. The winners'
// join ranks must look uniform, and the bots must win no more than their
// share (10%). Every admitted buyer who buys gets a unit.
// Can fail: with places given in arrival order (FIFO), the winners are the
// first 200 joiners: chi-square 1,800 and 200 bot wins. With late joiners
// placed by the draw too, they land among the pre-queue ("late joiner 2001:
// position 6").
func TestWaitingRoomDrawIsFair(t *testing.T) {
	const (
		users = 2000
		units = 200
		bots  = 200
	)
	s := newProcessStack(t, usercheck.StubConfig{})
	instances, _ := startInstances(t, s, 2, s.processEnv(nil))
	act, startsAt := s.createRoom(units, 15*time.Second)
	joinStart := time.Now()

	// Joins in rank order, a few at a time; a bot joins five times.
	ranks := make([]int64, users)
	var joinsLate atomic.Int64
	var wg sync.WaitGroup
	work := make(chan int64)
	for range 16 {
		wg.Go(func() {
			for u := range work {
				times := 1
				if u <= bots {
					times = 5
				}
				for range times {
					q := instances[int(u)%2].queue(http.MethodPost, act, u)
					if q.status != http.StatusOK {
						t.Errorf("user %d joins: %d %s", u, q.status, q.code)
					} else if q.state != "prequeue" {
						joinsLate.Add(1)
					}
				}
			}
		})
	}
	for i := range ranks {
		ranks[i] = int64(i + 1)
		work <- ranks[i]
	}
	close(work)
	wg.Wait()
	if n := joinsLate.Load(); n > 0 {
		t.Fatalf("%d joins landed after the start (%v): this test needs every join in the pre-queue", n, startsAt)
	}
	t.Logf("2,000 users (+800 repeat joins) joined in %v, %v before the start", time.Since(joinStart), time.Until(startsAt))
	time.Sleep(time.Until(startsAt) + 200*time.Millisecond)

	// Late joiners queue behind every pre-queue place, in arrival order.
	var lastPos int64
	for u := int64(users + 1); u <= users+5; u++ {
		q := instances[u%2].queue(http.MethodPost, act, u)
		if q.status != http.StatusOK || q.state != "waiting" || q.position <= users-units || q.position <= lastPos {
			t.Errorf("late joiner %d: %+v; want waiting behind the %d pre-queue places left, after %d", u, q, users-units, lastPos)
		}
		lastPos = q.position
	}

	all := make([]int64, 0, users+5)
	for u := int64(1); u <= users+5; u++ {
		all = append(all, u)
	}
	out := runCrowd(t, instances, act, all, func(u int64) int {
		if u <= bots {
			return 5
		}
		return 1
	}, 90*time.Second)

	if len(out.soldOutAdm) > 0 {
		t.Errorf("admitted buyers told sold_out: %v", out.soldOutAdm)
	}
	if len(out.winners) != units {
		t.Fatalf("%d units sold, want %d", len(out.winners), units)
	}
	buckets := make([]float64, 10)
	botWins := 0
	for _, u := range out.winners {
		if u > users {
			t.Errorf("late joiner %d won a unit before the pre-queue was served", u)
			continue
		}
		buckets[(u-1)*10/users]++
		if u <= bots {
			botWins++
		}
	}
	chi := 0.0
	for _, n := range buckets {
		chi += (n - units/10.0) * (n - units/10.0) / (units / 10.0)
	}
	t.Logf("winners per tenth of the join order %v: chi-square %.1f (df 9; 27.9 at p=0.001); bots won %d of %d (their share: 20)", buckets, chi, botWins, units)
	if chi > 27.88 {
		t.Errorf("winners' join ranks are not uniform: chi-square %.1f > 27.88", chi)
	}
	// Binomial(200, 0.1): mean 20, sd 4.2; 33 is beyond p=0.001.
	if botWins > 33 {
		t.Errorf("the bots (10%% of the users, joining and polling 5 times) won %d of %d units", botWins, units)
	}
	for u, q := range out.final {
		if q.state == "lapsed" {
			t.Errorf("user %d lapsed though every admitted user bought at once", u)
		}
	}
	s.checkBooksDirect(act, units, nil)
}
