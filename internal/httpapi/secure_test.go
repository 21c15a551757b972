package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// TestNoSniffOnEveryAnswer: every answer of both listeners, successes,
// errors, unknown paths, wrong methods, a body too large, a panic, /metrics
// and pprof, carries X-Content-Type-Options: nosniff (issue 33).
func TestNoSniffOnEveryAnswer(t *testing.T) {
	f := newFake()
	f.activity = func(id int64) (seckill.ActivityView, error) {
		if id == 9 {
			panic("boom")
		}
		return newFake().activity(id)
	}
	one := NewServer(Config{AdminToken: adminToken}, withParts(Deps{Service: f}))
	pub, ops := NewServers(Config{AdminToken: adminToken}, withParts(Deps{Service: f}))
	big := string(make([]byte, MaxBodyBytes+1))
	reqs := []request{
		{"GET", "/healthz", "", nil},
		{"GET", "/readyz", "", nil},
		{"GET", "/openapi.yaml", "", nil},
		{"GET", "/api/v1/activities/1", "", nil},
		{"GET", "/api/v1/activities/2", "", nil},
		{"GET", "/api/v1/activities/9", "", nil},
		{"POST", "/api/v1/activities/1/orders", "", user("42")},
		{"POST", "/api/v1/activities/1/orders", "", nil},
		{"POST", "/api/v1/activities/1/orders", big, user("42")},
		{"GET", "/api/v1/activities/1/orders/mine", "", user("42")},
		{"POST", "/healthz", "", nil},
		{"GET", "/nowhere", "", nil},
		{"GET", "/metrics", "", nil},
		{"GET", "/admin/v1/activities/1/audit", "", admin},
		{"GET", "/admin/v1/activities/1/audit", "", nil},
		{"GET", "/debug/pprof/", "", nil},
		{"GET", "/debug/pprof/goroutine?debug=1", "", admin},
	}
	for name, h := range map[string]http.Handler{"one listener": one, "public": pub, "ops": ops} {
		for _, r := range reqs {
			rec := serve(h, r)
			if got := rec.Header().Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("%s: %s %s answered %d with X-Content-Type-Options %q, want nosniff", name, r.method, r.path, rec.Code, got)
			}
		}
	}
}

// TestAdminFailuresSlowedDown: after AdminFailureBurst wrong admin tokens
// from one address, each further one is answered 401 only after a wait
// (the address's failure bucket, capped at AdminFailureMaxDelay); the right
// token never waits, nor does another address (issue 33).
func TestAdminFailuresSlowedDown(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	var slept []time.Duration
	cfg := Config{AdminToken: adminToken, Now: func() time.Time { return now },
		sleep: func(_ context.Context, d time.Duration) { slept = append(slept, d) }}
	h := NewServer(cfg, withParts(Deps{Service: newFake()}))
	const audit = "/admin/v1/activities/1/audit"
	from := func(addr string, hdr []string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", "http://seckill.test"+audit, nil)
		req.RemoteAddr = addr + ":40000"
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Add(hdr[i], hdr[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		checkAnswer(req, rec)
		return rec
	}
	wrong := []string{"Authorization", "Bearer not-the-token"}
	for i := range AdminFailureBurst {
		checkError(t, from("203.0.113.7", wrong), http.StatusUnauthorized, seckill.EUnauthenticated)
		if len(slept) != 0 {
			t.Fatalf("failure %d within the burst waited %v", i+1, slept)
		}
	}
	// Past the burst: one second per failure at AdminFailureRate, still 401.
	for i := 1; i <= 2; i++ {
		checkError(t, from("203.0.113.7", nil), http.StatusUnauthorized, seckill.EUnauthenticated)
		if want := time.Duration(i) * time.Second; len(slept) != i || slept[i-1] != want {
			t.Fatalf("failure %d past the burst waited %v, want %v last", i, slept, want)
		}
	}
	// A flood is capped, and does not book the bucket ever further ahead.
	for range 10 {
		from("203.0.113.7", wrong)
	}
	if last := slept[len(slept)-1]; last != AdminFailureMaxDelay {
		t.Errorf("a flood's wait = %v, want the cap %v", last, AdminFailureMaxDelay)
	}
	n := len(slept)
	// The right token from the same address never waits.
	if rec := from("203.0.113.7", admin); rec.Code != http.StatusOK {
		t.Errorf("right token after failures = %d", rec.Code)
	}
	// Another address has its own bucket.
	checkError(t, from("198.51.100.2", wrong), http.StatusUnauthorized, seckill.EUnauthenticated)
	if len(slept) != n {
		t.Errorf("the right token or another address waited: %v", slept[n:])
	}
	// The bucket refills: a minute later the address starts afresh.
	now = now.Add(time.Minute)
	from("203.0.113.7", wrong)
	if len(slept) != n {
		t.Errorf("a refilled bucket waited: %v", slept[n:])
	}
}

// The back-off remembers a bounded number of addresses.
func TestAdminFailuresBounded(t *testing.T) {
	f := newFailureBackoff(Config{sleep: func(context.Context, time.Duration) {}})
	for i := range AdminFailureAddresses + 100 {
		f.wait(context.Background(), strconv.Itoa(i))
	}
	if n := f.addrs.byKey.Len(); n != AdminFailureAddresses {
		t.Errorf("remembered %d addresses, want at most %d", n, AdminFailureAddresses)
	}
}

// TestReadyzCached: /readyz pings Redis and the database (Service.Ready)
// once per ReadyCacheTTL however many probes come, concurrent ones sharing
// the check in flight, and both listeners share it; a failure is cached the
// same way; /healthz never pings (issue 33).
func TestReadyzCached(t *testing.T) {
	now := time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	var pings atomic.Int64
	release := make(chan struct{})
	var failing atomic.Bool
	f := newFake()
	f.ready = func() error {
		pings.Add(1)
		<-release
		if failing.Load() {
			return errors.New("redis down")
		}
		return nil
	}
	pub, ops := NewServers(Config{AdminToken: adminToken, Now: clock}, withParts(Deps{Service: f}))

	const n = 20
	codes := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h := pub
			if i%2 == 1 {
				h = ops
			}
			codes <- serve(h, request{"GET", "/readyz", "", nil}).Code
		}()
	}
	// Let the probes pile up on the one check, then let it answer.
	for deadline := time.Now().Add(2 * time.Second); pings.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	close(codes)
	for c := range codes {
		if c != 200 {
			t.Errorf("concurrent /readyz = %d", c)
		}
	}
	// Later probes within the second reuse the result.
	advance(900 * time.Millisecond)
	for range n {
		if rec := serve(pub, request{"GET", "/readyz", "", nil}); rec.Code != 200 {
			t.Fatalf("cached /readyz = %d", rec.Code)
		}
		serve(pub, request{"GET", "/healthz", "", nil})
	}
	if got := pings.Load(); got != 1 {
		t.Fatalf("%d probes within a second cost %d pings, want 1", 2*n, got)
	}
	// A second later the next probe checks again, and a failure is cached too.
	failing.Store(true)
	advance(ReadyCacheTTL)
	for range 5 {
		checkJSON(t, serve(pub, request{"GET", "/readyz", "", nil}))
	}
	if rec := serve(ops, request{"GET", "/readyz", "", nil}); rec.Code != 503 {
		t.Errorf("after the TTL with Redis down: /readyz = %d, want 503", rec.Code)
	}
	if got := pings.Load(); got != 2 {
		t.Errorf("pings after the TTL = %d, want 2", got)
	}
}
