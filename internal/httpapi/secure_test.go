package httpapi

import (
	"net/http"
	"testing"

	"github.com/seckill-oss/seckill/internal/purchase"
)

// TestNoSniffOnEveryAnswer: every answer of both listeners, successes,
// errors, unknown paths, wrong methods, a body too large, a panic, /metrics
// and pprof, carries X-Content-Type-Options: nosniff (issue 33).
func TestNoSniffOnEveryAnswer(t *testing.T) {
	f := newFake()
	f.activity = func(id int64) (purchase.ActivityView, error) {
		if id == 9 {
			panic("boom")
		}
		return newFake().activity(id)
	}
	one := NewServer(Config{AdminToken: adminToken}, Deps{Service: f})
	pub, ops := NewServers(Config{AdminToken: adminToken}, Deps{Service: f})
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
