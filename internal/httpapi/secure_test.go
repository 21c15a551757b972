package httpapi

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/seckill-oss/seckill"
)

// TestNoSniffOnEveryAnswer: every answer of both listeners, successes,
// errors, unknown paths, wrong methods, a body too large, a panic, /metrics
// and pprof, carries X-Content-Type-Options: nosniff.
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

// TestReadyzCached: /readyz pings Redis and the database (Service.Ready)
// once per ReadyCacheTTL however many probes come, concurrent ones sharing
// the check in flight, and both listeners share it; a failure is cached the
// same way; /healthz never pings.
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
