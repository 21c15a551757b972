package e2e_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/sony/gobreaker/v2"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/toxic"
	"github.com/seckill-oss/seckill/internal/usercheck"
)

// proxy puts a fault proxy in front of addr for the rest of the test.
func proxy(t testing.TB, addr string) *toxic.Proxy {
	t.Helper()
	p, err := toxic.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	return p
}

// newStackBehindRedisProxy is newStack with its Redis reached through a
// proxy the test can delay, cut and bring back.
func newStackBehindRedisProxy(t *testing.T, opts stackOptions) (*stack, *toxic.Proxy) {
	t.Helper()
	var rp *toxic.Proxy
	opts.redisAddr = func(real string) string {
		rp = proxy(t, real)
		return rp.Addr()
	}
	return newStack(t, opts), rp
}

// The user-verification service hangs: every purchase answers 503 within
// the verification deadline, the breaker opens and answers without calling,
// half-opens after its timeout and closes again when the service is back.
// Nothing is sold while it is down, and the sale completes once it is up.
func TestVerificationHangsBreakerOpensAndRecovers(t *testing.T) {
	const ttl = 400 * time.Millisecond
	s := newStack(t, stackOptions{
		lockTTL: ttl, userCheckTimeout: ttl / 4,
		stub:    usercheck.StubConfig{Latency: time.Hour},
		breaker: usercheck.BreakerConfig{ConsecutiveFailures: 3, OpenTimeout: 300 * time.Millisecond},
	})
	const total = 10
	act := s.createActivity(total)

	for u := int64(1); u <= 6; u++ {
		start := time.Now()
		r := s.buy(act, u, nil)
		if r.status != http.StatusServiceUnavailable || r.code() != "unavailable" {
			t.Fatalf("buy while verification hangs: %d %s", r.status, r.raw)
		}
		if d := time.Since(start); d > ttl {
			t.Errorf("a hanging verification held the purchase %v, longer than the lock TTL %v", d, ttl)
		}
	}
	if st := s.users.State(); st != gobreaker.StateOpen {
		t.Fatalf("breaker %v after 6 failures, want open", st)
	}
	calls := s.stub.Requests()
	if r := s.buy(act, 7, nil); r.status != http.StatusServiceUnavailable {
		t.Fatalf("buy with breaker open: %d %s", r.status, r.raw)
	}
	if s.stub.Requests() != calls {
		t.Errorf("the open breaker let a call through")
	}
	if a := s.audit(act); a.Orders != 0 || a.RedisRemaining != total {
		t.Fatalf("something was sold while verification was down: %+v", a)
	}

	if err := s.stub.SetConfig(usercheck.StubConfig{}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(350 * time.Millisecond) // past the open timeout: half-open
	res := runSale(t, func(a, u int64) response { return s.buy(a, u, nil) }, act, 30, 5, 100)
	if st := s.users.State(); st != gobreaker.StateClosed {
		t.Errorf("breaker %v after the service came back, want closed", st)
	}
	if len(res.created) != total {
		t.Errorf("%d sold after recovery, want %d: %v", len(res.created), total, res.statuses)
	}
	s.checkBooks(act, total, res)
}

// Redis goes away in the middle of purchases and comes back: purchases in
// flight fail with 503 (or 429 while their batch leader waits on Redis),
// nothing is sold twice, no lock outlives its TTL, and after reconciliation
// the books balance.
func TestRedisUnreachableMidSale(t *testing.T) {
	s, rp := newStackBehindRedisProxy(t, stackOptions{
		lockTTL:      time.Second,
		redisTimeout: 200 * time.Millisecond,
	})
	const total = 200
	act := s.createActivity(total)

	// Buyers hold still after the 20th sale until Redis is gone, so the
	// fault lands mid-sale however fast or slow the machine is.
	var sold atomic.Int64
	faultOn := make(chan struct{})
	buy := func(a, u int64) response {
		if sold.Load() >= 20 {
			<-faultOn
		}
		r := s.buy(a, u, nil)
		if r.status == http.StatusCreated {
			sold.Add(1)
		}
		return r
	}
	var wg sync.WaitGroup
	var res *saleResult
	wg.Go(func() { res = runSale(t, buy, act, 400, 10, 1) })
	for deadline := time.Now().Add(time.Minute); sold.Load() < 20; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			close(faultOn)
			wg.Wait()
			t.Fatalf("20 sales did not happen within a minute: %v", res.statuses)
		}
	}
	if err := rp.SetDown(true); err != nil {
		t.Fatal(err)
	}
	close(faultOn)
	// A buyer while Redis is gone is refused, either by the Redis call
	// (unavailable) or by the queue wait of a leader stuck on it (busy).
	if r := s.buy(act, 100000, nil); r.status != http.StatusServiceUnavailable && r.status != http.StatusTooManyRequests {
		t.Errorf("buy while Redis is unreachable: %d %s, want 503 or 429", r.status, r.raw)
	}
	time.Sleep(1500 * time.Millisecond) // longer than the lock's bounded look-up after a failed acquire
	if err := rp.SetDown(false); err != nil {
		t.Fatal(err)
	}
	wg.Wait()

	if res.statuses["unavailable"]+res.statuses["busy"] == 0 {
		t.Errorf("no purchase saw Redis go away: %v", res.statuses)
	}
	r := s.do("POST", "/admin/v1/activities/"+strconv.FormatInt(act, 10)+"/reconcile", nil, admin())
	if r.status != http.StatusOK {
		t.Fatalf("reconcile: %d %s", r.status, r.raw)
	}
	a := s.checkBooks(act, total, res)
	t.Logf("answers %v, reconcile %s, audit %+v", res.statuses, r.raw, a)
}

// Redis answers slower than the client's timeout while its commands still
// land (seed 000's "timed out but succeeded"): the purchase answers 503, the
// lock it may have taken is recognised or cleaned up, so the same buyer can
// buy right after the fault instead of a TTL later, and nothing is oversold.
func TestRedisRepliesLateButCommandsLand(t *testing.T) {
	s, rp := newStackBehindRedisProxy(t, stackOptions{
		lockTTL:      30 * time.Second, // a stranded lock would block the buyer for 30 s
		redisTimeout: 100 * time.Millisecond,
	})
	const total = 5
	act := s.createActivity(total)

	rp.SetReplyDelay(300 * time.Millisecond)
	r := s.buy(act, 1, nil)
	rp.SetReplyDelay(0)
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("buy with late Redis replies: %d %s, want 503", r.status, r.raw)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		r = s.buy(act, 1, nil)
		if r.status == http.StatusCreated {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("buyer still refused 5 s after the fault (lock stranded for its TTL?): %d %s", r.status, r.raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.awaitLockFree(act)
	s.do("POST", "/admin/v1/activities/"+strconv.FormatInt(act, 10)+"/reconcile", nil, admin())
	s.checkBooks(act, total, nil)
}

// MariaDB becomes unreachable after the unit was deducted: the unit goes
// back to Redis, the buyer gets 503, nothing is lost, and the sale goes on
// when the database returns.
func TestDatabaseUnreachableAfterDeduct(t *testing.T) {
	var dp *toxic.Proxy
	s := newStack(t, stackOptions{})
	// A second instance whose database connection runs through a proxy.
	cfg, err := mysql.ParseDSN(s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	dp = proxy(t, cfg.Addr)
	cfg.Addr = dp.Addr()
	cfg.Timeout = 500 * time.Millisecond
	viaProxy := *s
	viaProxy.dsn = cfg.FormatDSN()
	viaProxy.start()

	const total = 10
	act := s.createActivity(total)
	if r := viaProxy.do("GET", "/api/v1/activities/"+strconv.FormatInt(act, 10), nil, nil); r.status != http.StatusOK {
		t.Fatalf("get activity: %d %s", r.status, r.raw)
	}
	if err := dp.SetDown(true); err != nil {
		t.Fatal(err)
	}
	for u := int64(1); u <= 5; u++ {
		r := viaProxy.buy(act, u, nil)
		if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" {
			t.Errorf("buy with the database down: %d %s, want 503 with Retry-After", r.status, r.raw)
		}
	}
	if left, err := s.rdb.HGet(context.Background(), keys.NewSpace(s.prefix).Stock(act), "remaining").Int64(); err != nil || left != total {
		t.Errorf("Redis remaining %d (%v) after failed writes, want %d: a unit was not returned", left, err, total)
	}
	if err := dp.SetDown(false); err != nil {
		t.Fatal(err)
	}
	res := runSale(t, func(a, u int64) response { return viaProxy.buy(a, u, nil) }, act, 20, 4, 1)
	if len(res.created) != total {
		t.Errorf("%d sold after the database came back, want %d: %v", len(res.created), total, res.statuses)
	}
	s.checkBooks(act, total, res)
}
