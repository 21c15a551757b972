package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/seckill-oss/seckill/internal/keys"
	"github.com/seckill-oss/seckill/internal/testkit/testenv"
	"github.com/seckill-oss/seckill/internal/usercheck"
	"github.com/seckill-oss/seckill/loadtest/naive"
)

// 1,000 distinct users race for 100 units: exactly 100 win, each once, and
// the books balance.
func TestThousandUsersRaceForHundredUnits(t *testing.T) {
	s := newStack(t, stackOptions{})
	act := s.createActivity(100)
	res := runSale(t, func(a, u int64) response { return s.buy(a, u, nil) }, act, 1000, 100, 1)

	if got := len(res.created); got != 100 {
		t.Errorf("%d orders created, want exactly 100; answers %v", got, res.statuses)
	}
	users := map[int64]bool{}
	for _, u := range res.created {
		if users[u] {
			t.Errorf("user %d got two 201s", u)
		}
		users[u] = true
	}
	a := s.checkBooks(act, 100, res)
	if a.Orders != 100 || a.RedisRemaining != 0 {
		t.Errorf("audit %+v, want 100 orders and nothing left", a)
	}
	if res.statuses["sold_out"] == 0 {
		t.Errorf("nobody was told sold_out: %v", res.statuses)
	}
	t.Logf("answers: %v", res.statuses)
}

// seed001 is the sale of incident A: the user service answers half the
// lock holders in three times the seed lock's TTL (and past the real
// service's lease too), Redis sits 1 ms away as it does across a real
// network, and 400 buyers arrive at once for 40 units, retrying busy answers
// at once and then with backoff, as a crowd hammering a sale does. The real
// service and the seed's handler both run through it.
var seed001 = struct {
	ttl              time.Duration
	stub             usercheck.StubConfig
	redisDelay       time.Duration
	total            int64
	buyers, parallel int
	backoff          time.Duration
}{
	ttl:        100 * time.Millisecond,
	stub:       usercheck.StubConfig{SlowRate: 0.5, SlowLatency: 300 * time.Millisecond, Seed: 1},
	redisDelay: time.Millisecond,
	total:      40,
	buyers:     400, parallel: 400,
	backoff: 2 * time.Millisecond,
}

// Seed 001 against the real service: the slow verifications fail with 503
// within their deadline, nothing is oversold, and the activity keeps selling
// to everyone else (no lock is stranded).
func TestSlowVerificationSeed001(t *testing.T) {
	sc := seed001
	s := newStack(t, stackOptions{
		lockTTL:          2 * sc.ttl,
		userCheckTimeout: sc.ttl,
		stub:             sc.stub,
		// The breaker must not open on the slow half: this test is about
		// the lease; the breaker has its own tests.
		breaker: usercheck.BreakerConfig{ConsecutiveFailures: 1 << 30},
		redisAddr: func(real string) string {
			p := proxy(t, real)
			p.SetReplyDelay(sc.redisDelay)
			return p.Addr()
		},
	})
	act := s.createActivity(sc.total)
	res := runSaleBackoff(t, func(a, u int64) response { return s.buy(a, u, nil) }, act, sc.buyers, sc.parallel, 1, sc.backoff)

	if res.statuses["unavailable"] == 0 {
		t.Errorf("no slow verification was answered 503: %v", res.statuses)
	}
	if got := int64(len(res.created)); got != sc.total {
		t.Errorf("%d sold, want all %d: the activity must keep selling; answers %v", got, sc.total, res.statuses)
	}
	s.checkBooks(act, sc.total, res)
	s.awaitLockFree(act)
	t.Logf("answers: %v", res.statuses)
}

// seedHandler serves incident A's handler (loadtest/naive) on the same
// route as the real service, so the same sale can be run against it. It
// verifies users over HTTP with the seed's 30 s timeout.
func seedHandler(s *stack, rdb *redis.Client, ttl time.Duration, stubURL string) http.Handler {
	seed := &naive.Seed{Redis: rdb, DB: s.db, Users: seedVerifier{stubURL}, Prefix: s.prefix, LockTTL: ttl}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		act, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
		user, _ := strconv.ParseInt(r.Header.Get("X-User-ID"), 10, 64)
		id, err := seed.Buy(r.Context(), act, user)
		switch {
		case err == nil:
			w.WriteHeader(http.StatusCreated)
			_ = json.NewEncoder(w).Encode(map[string]any{"order_id": id, "activity_id": act, "user_id": user, "status": "created"})
		case errors.Is(err, naive.ErrBusy):
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":{"code":"busy","message":"busy"}}`))
		case errors.Is(err, naive.ErrSoldOut):
			w.WriteHeader(http.StatusConflict)
			_, _ = w.Write([]byte(`{"error":{"code":"sold_out","message":"sold out"}}`))
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte(`{"error":{"code":"unavailable","message":"unavailable"}}`))
		}
	})
}

// seedVerifier is the seed's user-service call: any answer approves.
type seedVerifier struct{ url string }

var (
	seedClient = &http.Client{Timeout: 30 * time.Second} // the seed's 30 s HTTP timeout
	seedBuyer  = &http.Client{Timeout: 30 * time.Second} // the seed's answers do not follow the contract
)

func (v seedVerifier) Verify(ctx context.Context, user, act int64) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/v1/users/%d/eligibility?activity_id=%d", v.url, user, act), nil)
	if err != nil {
		return err
	}
	res, err := seedClient.Do(req)
	if err != nil {
		return err
	}
	return res.Body.Close()
}

// The seed's handler, run through the same sale as
// TestSlowVerificationSeed001, oversells: the evidence that the invariants
// checked there can fail. (It inserts its orders straight into the table,
// as the seed did, without the database guard the real service has.)
func TestSeedHandlerOversells(t *testing.T) {
	sc := seed001
	s := newStack(t, stackOptions{})
	direct := s.rdb.(*redis.Client)
	rp := proxy(t, direct.Options().Addr)
	rp.SetReplyDelay(sc.redisDelay)
	ropt := *direct.Options()
	ropt.Addr = rp.Addr()
	rdb := redis.NewClient(&ropt)
	t.Cleanup(func() { _ = rdb.Close() })
	mux := http.NewServeMux()
	mux.Handle("POST /api/v1/activities/{id}/orders", seedHandler(s, rdb, sc.ttl, newStubServer(t, sc.stub)))
	seed := newHTTPServer(t, mux)
	buy := func(a, u int64) response {
		req, _ := http.NewRequest("POST", fmt.Sprintf("%s/api/v1/activities/%d/orders", seed, a), nil)
		req.Header.Set("X-User-ID", strconv.FormatInt(u, 10))
		return doRaw(t, seedBuyer, req)
	}
	// The stall makes the race three lock TTLs wide at the last unit: every
	// sale oversold in 20 runs of this test (loadtest/RESULTS.md); the other
	// two sales are there so that a missed chance does not hide the proof.
	for round := range 3 {
		act := s.createActivity(sc.total)
		res := runSaleBackoff(t, buy, act, sc.buyers, sc.parallel, int64(round*sc.buyers+1), sc.backoff)
		n := 0
		for _, c := range s.ordersInDB(act) {
			n += c
		}
		left, _ := s.rdb.HGet(context.Background(), keys.NewSpace(s.prefix).Stock(act), "remaining").Int64()
		t.Logf("seed handler, sale %d: %d orders for %d units, Redis remaining %d, answers %v", round+1, n, sc.total, left, res.statuses)
		if int64(n) > sc.total {
			return
		}
	}
	t.Errorf("the seed's handler never oversold in 3 sales: the sale does not expose its oversell")
}

// Redis loses its data in the middle of a sale. Purchases then fail with
// 503 (nothing is sold against missing stock); preload loads total - orders;
// the sale completes without an oversell.
func TestRedisLostMidSaleThenPreload(t *testing.T) {
	s := newStack(t, stackOptions{})
	const total = 100
	act := s.createActivity(total)

	first := runSale(t, func(a, u int64) response { return s.buy(a, u, nil) }, act, 40, 8, 1)
	testenv.DeletePrefix(t, s.rdb, s.prefix) // stock, lock and fence counter all gone

	r := s.buy(act, 10_000, nil)
	if r.status != http.StatusServiceUnavailable || r.code() != "unavailable" || r.header.Get("Retry-After") == "" {
		t.Errorf("buy with Redis emptied: %d %s, want 503 unavailable with Retry-After", r.status, r.raw)
	}
	p := s.do("POST", fmt.Sprintf("/admin/v1/activities/%d/preload", act), nil, admin())
	orders := int64(len(s.ordersInDB(act)))
	if p.status != http.StatusOK || int64(p.body["remaining_stock"].(float64)) != total-orders {
		t.Fatalf("preload: %d %s, want remaining %d", p.status, p.raw, total-orders)
	}
	// Preloading again changes nothing: it is safe to repeat.
	if p2 := s.do("POST", fmt.Sprintf("/admin/v1/activities/%d/preload", act), nil, admin()); p2.status != http.StatusOK || p2.body["remaining_stock"] != p.body["remaining_stock"] {
		t.Errorf("second preload: %d %s", p2.status, p2.raw)
	}
	second := runSale(t, func(a, u int64) response { return s.buy(a, u, nil) }, act, 200, 20, 41)
	for id, u := range second.created {
		first.created[id] = u
	}
	if got := len(first.created); got != total {
		t.Errorf("%d sold in all, want %d; after preload: %v", got, total, second.statuses)
	}
	s.checkBooks(act, total, first)
}

// Many purchases at once, several service instances on one activity: the
// instances share Redis and MariaDB, and together they still sell exactly
// the stock.
func TestInstancesShareOneActivity(t *testing.T) {
	s := newStack(t, stackOptions{})
	others := []*stack{s, s.sibling(), s.sibling()}
	const total = 60
	act := s.createActivity(total)
	var n atomic.Int64
	res := runSale(t, func(a, u int64) response {
		return others[n.Add(1)%3].buy(a, u, nil)
	}, act, 300, 30, 1)
	if got := len(res.created); got != total {
		t.Errorf("%d sold, want %d: %v", got, total, res.statuses)
	}
	s.checkBooks(act, total, res)
}

// Repeating a purchase with the same Idempotency-Key returns the first
// outcome; a second purchase without it is already_purchased.
func TestIdempotentRepeat(t *testing.T) {
	s := newStack(t, stackOptions{})
	act := s.createActivity(5)
	key := map[string]string{"Idempotency-Key": "tap-1"}
	first := s.buy(act, 7, key)
	if first.status != http.StatusCreated {
		t.Fatalf("first: %d %s", first.status, first.raw)
	}
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() {
			again := s.buy(act, 7, key)
			if again.status != http.StatusCreated || again.body["order_id"] != first.body["order_id"] {
				t.Errorf("repeat: %d %s, want 201 with order %v", again.status, again.raw, first.body["order_id"])
			}
		})
	}
	wg.Wait()
	other := s.buy(act, 7, nil)
	if other.status != http.StatusConflict || other.code() != "already_purchased" || other.body["order_id"] != first.body["order_id"] {
		t.Errorf("second purchase: %d %s", other.status, other.raw)
	}
	s.checkBooks(act, 5, nil)
}

// One user's 100 concurrent purchases of one activity: exactly one 201, and
// 99 409 already_purchased naming its order (the contract's answer, which the
// one-purchase-in-flight guard must keep).
func TestOneUserHundredConcurrentPurchases(t *testing.T) {
	s := newStack(t, stackOptions{})
	act := s.createActivity(5)
	const n = 100
	res := make(chan response, n)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { res <- s.buy(act, 11, nil) })
	}
	wg.Wait()
	close(res)
	var created []response
	var ids []any
	for r := range res {
		switch {
		case r.status == http.StatusCreated:
			created = append(created, r)
		case r.status == http.StatusConflict && r.code() == "already_purchased":
			ids = append(ids, r.body["order_id"])
		default:
			t.Errorf("answer %d %s, want 201 or 409 already_purchased", r.status, r.raw)
		}
	}
	if len(created) != 1 || len(ids) != n-1 {
		t.Fatalf("%d created and %d already_purchased, want 1 and %d", len(created), len(ids), n-1)
	}
	for _, id := range ids {
		if id != created[0].body["order_id"] {
			t.Fatalf("already_purchased names %v, want %v", id, created[0].body["order_id"])
		}
	}
	s.checkBooks(act, 5, nil)
}

var _ = redis.Nil

// With SECKILL_LOCK_WAIT set, a purchase that finds the activity locked
// waits for the lock (up to the wait) instead of answering 429 at once.
func TestLockWaitWaitsForTheLock(t *testing.T) {
	s := newStack(t, stackOptions{lockWait: time.Second})
	act := s.createActivity(5)
	lk, err := s.locks.Obtain(context.Background(), keys.NewSpace(s.prefix).Lock(act), 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, func() { _ = lk.Release(context.Background()) })
	start := time.Now()
	if r := s.buy(act, 1, nil); r.status != http.StatusCreated {
		t.Fatalf("buy while the lock is held for 300 ms, waiting up to 1 s: %d %s", r.status, r.raw)
	}
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("bought after %v: the lock was not held", d)
	}

	held, err := s.locks.Obtain(context.Background(), keys.NewSpace(s.prefix).Lock(act), 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(context.Background())
	start = time.Now()
	r := s.buy(act, 2, nil)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Fatalf("buy while the lock stays held: %d %s, want 429 with Retry-After", r.status, r.raw)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 3*time.Second {
		t.Errorf("gave up after %v, want about the 1 s wait", d)
	}
}
