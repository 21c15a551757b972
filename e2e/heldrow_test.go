package e2e_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// TestHeldRowStallsOnlyItsActivity: 20 activities selling on 2 instances,
// while an outside transaction holds one activity's row for 5 s (as an
// expiry with a slow COMMIT, an operator's adjustment or a stuck session
// would). The other 19 keep at least half the orders/s they had with no row
// held, measured in the same run (the slower of the windows before and after
// the hold), and almost none of their buyers is told 503; the held activity
// ends with exact books and final answers.
//
// The bounds are for a stall, not for the machine's drift: beside a CI run
// on the same two cores a free activity's rate read 75% and one buyer in
// about 200 was told 503 (a lease that ended while the box was starved).
//
// Can fail: with the group commit's locking read waiting for the held row,
// every group that meets it stalls every activity in it: the other 19 fell
// to 0.18x their rate and 11 buyers were told 503 (docs/FAULTS.md).
func TestHeldRowStallsOnlyItsActivity(t *testing.T) {
	s := newProcessStack(t, usercheck.StubConfig{Latency: time.Millisecond})
	env := s.processEnv(nil)
	_, procs := startInstances(t, s, 2, env)
	const total = 1_000_000 // never sells out here
	acts := make([]int64, 20)
	for i := range acts {
		acts[i] = s.createActivity(total)
	}
	held := acts[0]

	var firstUser int64
	// sell runs buyers on both instances for d and returns their attempts.
	sell := func(d time.Duration) []attempt {
		stop := make(chan struct{})
		var bursts []*burst
		// The held activity's buyers have workers of their own: a worker
		// that waits there would slow the others' load, not their service.
		for _, p := range procs {
			bursts = append(bursts, startBurst(s.client, p.url, acts[1:], 12, firstUser, stop))
			bursts = append(bursts, startBurst(s.client, p.url, acts[:1], 2, firstUser+5_000_000, stop))
			firstUser += 10_000_000
		}
		time.Sleep(d)
		close(stop)
		var all []attempt
		for _, b := range bursts {
			all = append(all, b.finish()...)
		}
		return all
	}
	// rate is the others' orders/s among attempts.
	rate := func(as []attempt, d time.Duration) float64 {
		n := 0
		for _, a := range as {
			if a.err == nil && a.status == http.StatusCreated && a.activity != held {
				n++
			}
		}
		return float64(n) / d.Seconds()
	}

	// A first second of sales warms the instances (connections, caches),
	// whose first window would otherwise read slow. The baseline is the
	// slower of the windows before and after the hold: the shared machine's
	// own load drifts from one to the next, by a fifth and more in CI beside
	// other work, while a row that stalls the others takes them to a fifth
	// of that rate.
	warm := sell(time.Second)
	const window = 5 * time.Second
	before := sell(3 * time.Second)
	release := testenv.HoldRow(t, s.dsn, held, 0)
	during := sell(window)
	release()
	after := sell(3 * time.Second)

	baseline := min(rate(before, 3*time.Second), rate(after, 3*time.Second))
	got := rate(during, window)
	t.Logf("the other 19 activities: %.0f orders/s with no row held (before %.0f, after %.0f), %.0f while activity %d's row was held (%.2fx)",
		baseline, rate(before, 3*time.Second), rate(after, 3*time.Second), got, held, got/baseline)
	t.Logf("answers while held: others %v; held activity %v",
		summary(slices.DeleteFunc(slices.Clone(during), func(a attempt) bool { return a.activity == held })),
		summary(slices.DeleteFunc(slices.Clone(during), func(a attempt) bool { return a.activity != held })))
	others, unavailable := 0, 0
	for _, a := range during {
		if a.activity != held {
			others++
			if a.err != nil || a.status == http.StatusServiceUnavailable {
				unavailable++
				t.Logf("activity %d (row free) answered %d %s %v while another activity's row was held", a.activity, a.status, a.code, a.err)
			}
		}
		if a.activity == held && (a.err != nil || a.code == "outcome_unknown") {
			t.Errorf("held activity %d: answer %d %s %v; want a final answer", a.activity, a.status, a.code, a.err)
		}
	}
	if unavailable*50 > others {
		t.Errorf("%d of the other activities' %d answers were 503 or no answer while one row was held: over 2%%", unavailable, others)
	}
	if got < 0.5*baseline {
		t.Errorf("the other activities sold %.0f orders/s while one row was held, %.0f without: under half", got, baseline)
	}
	all := slices.Concat(warm, before, during, after)
	for _, a := range acts {
		s.checkBooksDirect(a, total, created(all, a))
	}
}
