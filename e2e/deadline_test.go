package e2e_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Redis hangs mid-sale (every reply arrives 5 s late, past the service's
// 200 ms timeout, while the commands still land): every buyer is answered
// within one bounded time, LockWait in the queue plus the batch's lock wait,
// lease and detached clean-up, not a multiple of the Redis timeout per
// command it tried. A buyer whose batch met the timeout gets 503; once a
// batch has met it, buyers queued behind get 503 too, not 429. After the
// fault the sale goes on and the books balance after reconciliation.
func TestAnswersStayBoundedWhenRedisHangs(t *testing.T) {
	const lockTTL, lockWait = time.Second, time.Second
	s, rp := newStackBehindRedisProxy(t, stackOptions{
		lockTTL:      lockTTL,
		lockWait:     lockWait,
		redisTimeout: 200 * time.Millisecond,
	})
	const total = 50
	act := s.createActivity(total)
	if r := s.buy(act, 1, nil); r.status != http.StatusCreated {
		t.Fatalf("buy before the fault: %d %s", r.status, r.raw)
	}

	// The bound: LockWait in the queue, LockWait for the lock, the lease,
	// the lock's three look-ups after a failed acquire (1 s each), and the
	// detached settle (three 2 s attempts). A slow machine adds to it.
	const bound = 2*lockWait + lockTTL + 3*time.Second + 6*time.Second + 5*time.Second
	rp.SetReplyDelay(5 * time.Second)
	wave := func(first int64) (statuses map[int]int, slowest time.Duration) {
		var mu sync.Mutex
		statuses = map[int]int{}
		var wg sync.WaitGroup
		for u := first; u < first+20; u++ {
			wg.Go(func() {
				began := time.Now()
				r := s.buy(act, u, nil)
				took := time.Since(began)
				mu.Lock()
				defer mu.Unlock()
				statuses[r.status]++
				slowest = max(slowest, took)
				if r.status != http.StatusServiceUnavailable && r.status != http.StatusTooManyRequests {
					t.Errorf("user %d during the fault: %d %s, want 503 (or 429 from the queue)", u, r.status, r.raw)
				}
			})
		}
		wg.Wait()
		return statuses, slowest
	}
	first, slowFirst := wave(100)
	second, slowSecond := wave(200)
	rp.SetReplyDelay(0)
	if first[http.StatusServiceUnavailable] == 0 {
		t.Errorf("no buyer of the first wave was told Redis failed: %v", first)
	}
	if second[http.StatusTooManyRequests] > 0 {
		t.Errorf("second wave %v: buyers behind a batch that met the Redis timeout must get 503, not 429", second)
	}
	for _, slow := range []time.Duration{slowFirst, slowSecond} {
		if slow > bound {
			t.Errorf("a buyer waited %v for its answer, past the bound %v", slow, bound)
		}
	}

	// The sale goes on; reconciliation returns what the fault leaked.
	deadline := time.Now().Add(30 * time.Second)
	for r := s.buy(act, 2, nil); r.status != http.StatusCreated; r = s.buy(act, 2, nil) {
		if time.Now().After(deadline) {
			t.Fatalf("buyer still refused 30 s after the fault: %d %s", r.status, r.raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if r := s.do("POST", "/admin/v1/activities/"+strconv.FormatInt(act, 10)+"/reconcile", nil, admin()); r.status != http.StatusOK {
		t.Fatalf("reconcile: %d %s", r.status, r.raw)
	}
	s.checkBooks(act, total, nil)
	t.Logf("first wave %v, slowest %v; second wave %v, slowest %v (bound %v)",
		first, slowFirst.Round(time.Millisecond), second, slowSecond.Round(time.Millisecond), bound)
}
